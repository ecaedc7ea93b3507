"""Tags and saved views in a database (tore_engine.results.tags, `tore.tags`): a tag on a page or a
box with a note, a tag's pages, views by name; two processes writing at once keep every tag; bad
values are an `InputError`."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest

import tore_engine as tore
from tests.helpers import REPOSITORY
from tore_engine.core.errors import InputError
from tore_engine.results.tags import DATABASE_VARIABLE, DEFAULT_FILE, Tag, _engine, database_url


def test_page_and_box_tags_with_notes(tmp_path):
    store = tore.tags(tmp_path / "tags.sqlite")
    store.add("gt", "p1", "reference wrong", note="the table is a figure")
    store.add("gt", "p2", "ambiguous")
    store.add("gt", "p1", "reference wrong", side="reference", box=3)
    store.add("gt", "p3", "reference wrong", note="first")
    store.add("gt", "p3", "reference wrong", note="second")  # the same tag again: its note changes
    store.add("other", "p9", "reference wrong")
    assert store.pages("gt", "reference wrong") == ["p1", "p3"]
    assert store.names("gt") == ["ambiguous", "reference wrong"]
    found = [(t.page, t.side, t.box, t.note) for t in store.find("gt", name="reference wrong")]
    assert found == [("p1", None, None, "the table is a figure"), ("p1", "reference", 3, None), ("p3", None, None, "second")]
    assert store.remove("gt", "p1", "reference wrong") and not store.remove("gt", "p1", "reference wrong")
    assert store.pages("gt", "reference wrong") == ["p1", "p3"]  # its box is still tagged
    again = tore.tags(tmp_path / "tags.sqlite")  # another connection, as after a restart
    assert [t.page for t in again.find("other")] == ["p9"] and isinstance(again.find()[0], Tag)


def test_a_page_list_is_tagged_in_one_transaction_all_or_none(tmp_path):
    store = tore.tags(tmp_path / "tags.sqlite")
    store.add("gt", "p2", "to check", note="old")
    assert store.add_pages("gt", ["p1", "p2", "p3"], "to check", note="from a cell") == 3
    assert sorted(store.pages("gt", "to check")) == ["p1", "p2", "p3"]
    assert {t.page: t.note for t in store.find("gt", name="to check")} == dict.fromkeys(["p1", "p2", "p3"], "from a cell")  # p2's note updated
    with pytest.raises(InputError, match="page"):
        store.add_pages("gt", ["p4", "p5", ""], "later")  # one page id is empty: nothing is tagged
    assert store.pages("gt", "later") == []


def test_saved_views_by_name(tmp_path):
    store = tore.tags(tmp_path / "tags.sqlite")
    store.save_view("weak tables", "src=saved&saved=runs%2Fa&cell=Table%2FText")
    store.save_view("all", "src=demo")
    store.save_view("weak tables", "src=saved&saved=runs%2Fb")
    assert store.views() == {"all": "src=demo", "weak tables": "src=saved&saved=runs%2Fb"}
    assert store.delete_view("all") and list(store.views()) == ["weak tables"]


@pytest.mark.parametrize("call", [
    lambda s: s.add("gt", "", "x"),
    lambda s: s.add("gt", "p1", "x", box=2),  # a box without its side
    lambda s: s.add("gt", "p1", "x", side="left", box=2),
    lambda s: s.add("gt", "p1", "x", side="prediction", box=-1),
    lambda s: s.add("gt", "p1", "x" * 3000),
    lambda s: s.add("gt", "p1", "bad\x00name"),
    lambda s: s.add("gt", "p1\ud800", "x"),
])
def test_bad_values_are_refused(tmp_path, call):
    with pytest.raises(InputError):
        call(tore.tags(tmp_path / "tags.sqlite"))


def test_the_database_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(DATABASE_VARIABLE, raising=False)
    assert database_url(tmp_path) == f"sqlite+pysqlite:///{tmp_path / DEFAULT_FILE}"
    monkeypatch.setenv(DATABASE_VARIABLE, str(tmp_path / "team.sqlite"))
    assert database_url(tmp_path) == f"sqlite+pysqlite:///{tmp_path / 'team.sqlite'}"
    monkeypatch.setenv(DATABASE_VARIABLE, "postgresql://team@db/tore")
    assert database_url(tmp_path) == "postgresql://team@db/tore"
    with pytest.raises(InputError, match="tags database"):
        tore.tags("nosuchdialect://x")


WRITER = textwrap.dedent("""
    import sys, tore_engine as tore
    store = tore.tags(sys.argv[1])
    sys.stdout.write("ready\\n"); sys.stdout.flush(); sys.stdin.readline()  # all writers start together
    for k in range(int(sys.argv[3])):
        store.add("gt", f"{sys.argv[2]}-{k}", "checked", note=str(k))
        store.add("gt", "shared", f"{sys.argv[2]}-{k}")
""")


def test_two_processes_writing_at_once_keep_every_tag(tmp_path):
    database, count = tmp_path / "tags.sqlite", 60
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(database), name, str(count)], cwd=REPOSITORY, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for name in ("one", "two")]
    for writer in writers:
        if writer.stdout.readline() != "ready\n":
            for other in writers:
                other.kill()
            pytest.fail(f"a writer could not open the database: {writer.communicate()[1][-2000:]}")
    for writer in writers:
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        _, err = writer.communicate(timeout=600)
        assert writer.returncode == 0, err
    store = tore.tags(database)
    expected = {f"{name}-{k}" for name in ("one", "two") for k in range(count)}
    assert set(store.pages("gt", "checked")) == expected and len(store.find("gt", name="checked")) == 2 * count
    assert {tag.name for tag in store.find("gt", page="shared")} == expected


def test_connections_opening_a_new_database_at_once_all_open_it(tmp_path):
    """Each connection switches a new database to WAL; switching at once, SQLite refused all but one
    at once ("database is locked", no wait): a CI flake, about 1 trial in 20 here with 4 threads."""
    failures: list[str] = []

    def open_and_write(engine, barrier):
        barrier.wait()
        try:
            with engine.begin() as connection:
                connection.exec_driver_sql("CREATE TABLE IF NOT EXISTS seen (k)")
        except Exception as error:  # noqa: BLE001 - collected and reported below
            failures.append(repr(error))

    for trial in range(300):
        url = f"sqlite+pysqlite:///{tmp_path / f'{trial}.sqlite'}"
        engines, barrier = [_engine(url) for _ in range(4)], threading.Barrier(4)
        threads = [threading.Thread(target=open_and_write, args=(engine, barrier)) for engine in engines]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for engine in engines:
            engine.dispose()
    assert failures == []

"""Tags on pages and boxes, and saved views, kept in a database (issue 39): what a user finds while
triaging ("reference wrong", "ambiguous") outlives the session and the server, and several
sessions, servers or notebooks read and write the same tags.

SQLite by default: one file (`$TORE_STUDIO_DB`, else `DEFAULT_FILE` in the folder given, the app's
data root), in WAL mode with a busy timeout, each write its own `BEGIN IMMEDIATE` transaction, so
that writers in several processes wait for each other instead of failing, and none loses another's
tag. Any SQLAlchemy URL instead (`postgresql://...`) when a team shares one server.

A tag belongs to a dataset (the reference's name: a tag on a reference page holds for every run
against it), a page and, optionally, a box (its side and index in the page's `boxes`); it has a
free name and an optional note. Adding the same tag again updates its note. A saved view is a
name for the app's URL state (its query string).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tore_engine.core.errors import InputError
from tore_engine.core.layout import unicode_problem

if TYPE_CHECKING:
    import sqlalchemy as sa

DATABASE_VARIABLE = "TORE_STUDIO_DB"  # a file path or an SQLAlchemy URL
DEFAULT_FILE = ".tore-studio.sqlite"
BUSY_TIMEOUT_SECONDS = 30  # how long a writer waits for another's transaction before failing
MAX_TEXT = 2000  # characters of a name, note, page id or view
SIDES = ("reference", "prediction")


@dataclass(frozen=True)
class Tag:
    dataset: str
    page: str
    name: str
    side: str | None = None  # with `box`: the box's side
    box: int | None = None
    note: str | None = None
    created: str = ""  # ISO 8601, UTC


def database_url(folder: str | Path | None = None) -> str:
    """`$TORE_STUDIO_DB` (an SQLAlchemy URL, or a file path), else the SQLite file `DEFAULT_FILE`
    in `folder` (the current folder when None)."""
    given = os.environ.get(DATABASE_VARIABLE, "").strip()
    if "://" in given:
        return given
    path = Path(given) if given else Path(folder or ".") / DEFAULT_FILE
    return f"sqlite+pysqlite:///{path.absolute()}"


def _checked(value: Any, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT or unicode_problem(value) is not None or "\x00" in value:
        raise InputError(f"a tag's {what} must be non-empty text of at most {MAX_TEXT:,} characters, without NUL (which "
                         f"PostgreSQL cannot store), got {str(value)[:80]!r}")
    return value


class TagStore:
    """The tags and saved views of one database (`tags()` opens it)."""

    def __init__(self, url: str) -> None:
        import sqlalchemy as sa

        self.url = url
        self._metadata = sa.MetaData()
        self._tags = sa.Table(
            "tore_tags", self._metadata,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("dataset", sa.String(MAX_TEXT), nullable=False),
            sa.Column("page", sa.String(MAX_TEXT), nullable=False),
            sa.Column("side", sa.String(16), nullable=False),  # "" for a page tag (NULLs would not be unique)
            sa.Column("box", sa.Integer, nullable=False),  # -1 for a page tag
            sa.Column("name", sa.String(MAX_TEXT), nullable=False),
            sa.Column("note", sa.Text, nullable=True),
            sa.Column("created", sa.String(40), nullable=False),
            sa.UniqueConstraint("dataset", "page", "side", "box", "name", name="tore_tags_one"),
        )
        sa.Index("tore_tags_by_name", self._tags.c.dataset, self._tags.c.name)
        self._views = sa.Table(
            "tore_views", self._metadata,
            sa.Column("name", sa.String(MAX_TEXT), primary_key=True),
            sa.Column("state", sa.Text, nullable=False),
            sa.Column("created", sa.String(40), nullable=False),
        )
        self._engine = _engine(url)
        with self._write() as connection:
            self._metadata.create_all(connection)

    def __repr__(self) -> str:
        return f"TagStore({self._engine.url.render_as_string(hide_password=True)})"

    @contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        try:
            with self._engine.begin() as connection:
                yield connection
        except InputError:
            raise
        except Exception as error:  # the database's own error (locked past the timeout, unreachable)
            raise InputError(f"the tags database {self!r} refused the change: {error.__class__.__name__}: {str(error)[:300]}") from None

    # --- tags ----------------------------------------------------------------------------------

    def add(self, dataset: str, page: str, name: str, *, note: str | None = None, side: str | None = None, box: int | None = None) -> Tag:
        """Tag a page (or one of its boxes: `side` and `box` both given); the same tag again updates its note."""
        key = self._key(dataset, page, name, side, box)
        note = _checked(note, "note", optional=True)
        created = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._write() as connection:
            self._put(connection, key, note, created)
        return Tag(dataset, page, name, side, box, note, created)

    def add_pages(self, dataset: str, pages: Sequence[str], name: str, *, note: str | None = None) -> int:
        """Tag each of `pages` (a page list of the app, an export's selection) in one transaction: all
        or none; how many."""
        keys = [self._key(dataset, page, name, None, None) for page in pages]
        note = _checked(note, "note", optional=True)
        created = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._write() as connection:
            for key in keys:
                self._put(connection, key, note, created)
        return len(keys)

    def _put(self, connection: sa.Connection, key: dict[str, Any], note: str | None, created: str) -> None:
        """Insert the tag, or update its note when it is there."""
        import sqlalchemy as sa

        found = connection.execute(sa.select(self._tags.c.id).where(*self._matching(key))).first()
        if found is None:
            connection.execute(self._tags.insert().values(**key, note=note, created=created))
        else:
            connection.execute(self._tags.update().where(self._tags.c.id == found.id).values(note=note))

    def remove(self, dataset: str, page: str, name: str, *, side: str | None = None, box: int | None = None) -> bool:
        """Take a tag off; whether there was one."""
        with self._write() as connection:
            return connection.execute(self._tags.delete().where(*self._matching(self._key(dataset, page, name, side, box)))).rowcount > 0

    def _key(self, dataset: str, page: str, name: str, side: str | None, box: int | None) -> dict[str, Any]:
        if (side is None) != (box is None) or (side is not None and side not in SIDES):
            raise InputError(f"a box tag needs the box's side ({' or '.join(SIDES)}) and its index; a page tag neither")
        if box is not None and (not isinstance(box, int) or isinstance(box, bool) or box < 0):
            raise InputError(f"a box index is a whole number from 0, got {box!r}")
        return {"dataset": _checked(dataset, "dataset"), "page": _checked(page, "page"), "name": _checked(name, "name"),
                "side": side or "", "box": -1 if box is None else box}

    def _matching(self, key: dict[str, Any]) -> list:
        return [self._tags.c[column] == value for column, value in key.items()]

    def find(self, dataset: str | None = None, *, name: str | None = None, page: str | None = None) -> list[Tag]:
        """The tags, of one dataset, name or page when given, in the order they were made."""
        import sqlalchemy as sa

        columns = self._tags.c
        query = sa.select(self._tags).order_by(columns.id)
        for column, value in (("dataset", dataset), ("name", name), ("page", page)):
            if value is not None:
                query = query.where(columns[column] == value)
        with self._engine.connect() as connection:
            rows = connection.execute(query).all()
        return [Tag(row.dataset, row.page, row.name, row.side or None, None if row.box < 0 else row.box, row.note, row.created) for row in rows]

    def pages(self, dataset: str, name: str) -> list[str]:
        """The pages that carry tag `name` (on the page or on one of its boxes), each once, in tagging order."""
        return list(dict.fromkeys(tag.page for tag in self.find(dataset, name=name)))

    def names(self, dataset: str | None = None) -> list[str]:
        """The tag names in use, sorted."""
        return sorted({tag.name for tag in self.find(dataset)})

    # --- saved views ---------------------------------------------------------------------------

    def save_view(self, name: str, state: str) -> None:
        """Keep the app's URL state (its query string) under `name`, replacing a view of that name."""
        import sqlalchemy as sa

        _checked(name, "view name")
        if not isinstance(state, str) or len(state) > 16 * MAX_TEXT:
            raise InputError("a view's state is the app's query string, of at most 32,000 characters")
        created = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._write() as connection:
            connection.execute(sa.delete(self._views).where(self._views.c.name == name))
            connection.execute(self._views.insert().values(name=name, state=state, created=created))

    def views(self) -> dict[str, str]:
        """Saved views: name -> the app's query string, by name."""
        import sqlalchemy as sa

        with self._engine.connect() as connection:
            return {row.name: row.state for row in connection.execute(sa.select(self._views).order_by(self._views.c.name))}

    def delete_view(self, name: str) -> bool:
        import sqlalchemy as sa

        with self._write() as connection:
            return connection.execute(sa.delete(self._views).where(self._views.c.name == name)).rowcount > 0


def _engine(url: str) -> sa.Engine:
    """An engine for `url`; for SQLite, WAL mode, a busy timeout, and every transaction begun
    IMMEDIATE (a deferred one that reads first can fail at once on its first write when another
    process writes, whatever the timeout: SQLite's lock upgrade, which no wait resolves)."""
    import sqlalchemy as sa

    try:
        engine = sa.create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_SECONDS} if url.startswith("sqlite") else {})
    except Exception as error:  # a malformed URL or a missing database driver
        raise InputError(f"cannot use {DATABASE_VARIABLE} / the tags database URL: {error}") from None
    if engine.dialect.name == "sqlite":
        @sa.event.listens_for(engine, "connect")
        def _connected(connection: Any, _record: Any) -> None:
            connection.isolation_level = None  # pysqlite's own transaction handling off: ours below
            cursor = connection.cursor()
            cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_SECONDS * 1000}")
            _switch_to_wal(cursor)
            cursor.close()

        @sa.event.listens_for(engine, "begin")
        def _begin(connection: sa.Connection) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _switch_to_wal(cursor: Any) -> None:
    """`PRAGMA journal_mode=WAL`, again until it is taken or the busy timeout has passed: when
    several connections open a new database at once, each holds a shared lock and wants the
    exclusive one the switch needs, and SQLite refuses at once ("database is locked") instead of
    calling the busy handler, which could only deadlock there. A plain loop: the statement holds no
    lock once refused, so trying again is safe, and the wait is SQLite's own timeout."""
    import sqlite3
    import time

    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def tags(database: str | Path | None = None) -> TagStore:
    """The tags and saved views (formats: `TagStore`): of the SQLAlchemy URL or SQLite file
    `database`, else of `$TORE_STUDIO_DB`, else of `DEFAULT_FILE` in the current folder (the app
    keeps its own in its data root)."""
    if database is None:
        url = database_url()
    elif "://" in str(database):
        url = str(database)
    else:
        url = f"sqlite+pysqlite:///{Path(database).absolute()}"
    return TagStore(url)

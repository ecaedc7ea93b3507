"""tore_engine.studio.background: work queued during a run starts after it, in its own thread."""

from __future__ import annotations

import threading
import time

from tore_engine.studio import background


def test_queued_work_starts_once_the_run_ends_each_in_its_own_thread(monkeypatch):
    monkeypatch.setattr(background, "DRAWN_AFTER", 0.05)
    ran: list[str] = []
    done = threading.Event()

    def work() -> None:
        ran.append(threading.current_thread().name)
        if len(ran) == 2:
            done.set()

    background.later("tore-first", work)
    background.later("tore-second", work)
    assert ran == []  # queued during the run, not run
    background.start_queued()
    assert done.wait(10)
    assert sorted(ran) == ["tore-first", "tore-second"]
    background.start_queued()  # the queue was emptied: nothing runs twice
    threading.Event().wait(0.2)
    assert len(ran) == 2


def test_waiting_for_the_first_page_ends_once_a_run_has_ended_and_its_page_is_drawn(monkeypatch):
    monkeypatch.setattr(background, "DRAWN_AFTER", 0.1)
    monkeypatch.setattr(background, "_first_page_drawn", threading.Event())
    started = time.monotonic()
    background.wait_first_page(0.3)  # no run yet: until the timeout
    assert time.monotonic() - started >= 0.25  # the timeout (a timer may wake a little early)
    started = time.monotonic()  # before the timer starts: on a loaded machine starting it took 0.06 s of its 0.1
    background.start_queued()
    background.wait_first_page(30)
    assert 0.05 <= time.monotonic() - started < 10

"""Values made once whoever asks (tore_engine.core.derived): a thread asking while another makes
the value waits for it."""

from __future__ import annotations

import threading
import time

from tore_engine.core.derived import Derived


def test_a_derived_value_is_made_once_whoever_asks_while_it_is_made():
    derived, calls, started = Derived(), [], threading.Event()

    def slow() -> int:
        calls.append(threading.current_thread().name)
        started.set()
        time.sleep(0.2)
        return len(calls)

    background = threading.Thread(target=derived.get, args=("pages", slow), name="background")
    background.start()
    started.wait(5)
    assert derived.get("pages", slow) == 1  # waited for the background's value instead of making its own
    background.join()
    assert calls == ["background"] and derived.has("pages") and not derived.has("index")

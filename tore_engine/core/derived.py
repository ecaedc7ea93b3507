"""Values derived from a result on first use, once, even when threads ask at once: the app's page
index (made in a background thread) and its script both need an evaluation's pages' frame (0.4 s
at 100,000 pages) and mAP's summary (1 s); each is made by the first thread to ask while the
others wait for it (Python 3.12's `functools.cached_property` has no lock)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Derived:
    """Named values, each made once by `get`: a second thread asking for a value being made waits
    for it."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._making: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, name: str, make: Callable[[], T]) -> T:
        with self._lock:
            if name in self._values:
                return self._values[name]
            making = self._making.setdefault(name, threading.Lock())
        with making:
            with self._lock:
                if name in self._values:
                    return self._values[name]
            value = make()
            with self._lock:
                self._values[name] = value
                return value

    def has(self, name: str) -> bool:
        with self._lock:
            return name in self._values

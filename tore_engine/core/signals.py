"""Stop signals (SIGINT, SIGTERM, SIGHUP): a stop raised as `Stopped` in the main thread, held back
across the steps that must not be cut in two, and a second stop that ends the process at once.

A stop can come at any instant. Raised halfway through a step that starts or replaces something
(a process pool that has forked its workers but not yet started the thread that watches them, a set
of result files half swapped), it leaves a state that nothing can finish or undo: the pool's
shutdown failed ("cannot join thread before it is started") or waited for ever. Such a step runs
under `held()`: a stop that comes meanwhile is delivered right after it. A stop that comes while an
earlier one is still being handled (the workers being stopped, a held stop waiting) ends the process
at once, the cleanups registered with `at_once` done first: the user asked twice, and a wait that
hangs must not outlast them.
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
RETRY_SECONDS = 0.05  # a stop that Python dropped (raised inside a finaliser) is raised again after this
Handler = Callable[[int, FrameType | None], object] | int  # a signal's handler, or SIG_DFL / SIG_IGN


class Stopped(BaseException):
    """A stop signal, raised in the main thread so that the way out stops the workers and removes
    temporary files (a BaseException, like KeyboardInterrupt: no `except Exception` swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def describe(signum: int) -> str:
    """What a command stopped by `signum` says."""
    return "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"


def _signal_main_thread(signum: int) -> None:
    """Deliver `signum` to the main thread itself, so that a blocking wait there ends too."""
    if hasattr(signal, "pthread_kill"):
        main = threading.main_thread().ident
        assert main is not None  # the main thread has started: it runs this program
        signal.pthread_kill(main, signum)
    else:
        _thread.interrupt_main(signal.Signals(signum))


class _Stops:
    """The stop handler of a command (`stops_raised`): the first stop raises `Stopped`, a second one
    ends the process at once. Python drops an exception raised while a finaliser or an at-fork hook
    runs (after printing "Exception ignored"): such a stop is raised again a moment later."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.signum: int | None = None
        self.cleanups: list[Callable[[], None]] = []
        self.dropped = False  # the stop raised was dropped by Python: the next one raises it again
        self.ending = False  # a second stop is ending the process
        self._retry: threading.Timer | None = None
        self._unraisable_hook = sys.unraisablehook

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if self.signum is not None and not self.dropped:
            self.end_at_once(signum)
            return
        self.signum, self.dropped = signum, False
        raise Stopped(signum)

    def end_at_once(self, signum: int) -> None:
        """Kill what must not outlive the process, say so, and end it. A stop that comes meanwhile
        returns at once (this call ends the process), and nothing raised may keep it alive."""
        if self.ending:
            return
        self.ending = True
        try:
            for cleanup in reversed(self.cleanups):
                with suppress(BaseException):
                    cleanup()
            with suppress(BaseException):
                self.say(f"{describe(signum)} (a second stop: ended at once)")
        finally:
            os._exit(128 + signum)

    def unraisable(self, info: sys.UnraisableHookArgs) -> None:
        if not isinstance(info.exc_value, Stopped):
            self._unraisable_hook(info)
            return
        self.dropped = True
        self._retry = threading.Timer(RETRY_SECONDS, _signal_main_thread, args=(info.exc_value.signum,))
        self._retry.daemon = True
        self._retry.start()


_command: _Stops | None = None  # the command under way in this process, while `stops_raised` runs


@contextmanager
def stops_raised(say: Callable[[str], None]) -> Iterator[None]:
    """Run a command with the stop signals raised as `Stopped` (`say`: how it reports a line); a stop
    that came while the command was finishing is raised after it. Outside the main thread, where
    handlers cannot be set, nothing changes."""
    global _command
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stops = _command = _Stops(say)
    previous = {number: signal.signal(number, stops) for number in STOP_SIGNALS}
    sys.unraisablehook = stops.unraisable
    try:
        yield
    finally:
        if stops._retry is not None:
            stops._retry.cancel()
        sys.unraisablehook = stops._unraisable_hook
        for number, former in previous.items():
            signal.signal(number, former)
        _command = None
    if stops.signum is not None:
        raise Stopped(stops.signum)


@contextmanager
def at_once(cleanup: Callable[[], None]) -> Iterator[None]:
    """During the block, `cleanup` runs before a second stop ends the process (it must not wait)."""
    command = _command
    if command is None:
        yield
        return
    command.cleanups.append(cleanup)
    try:
        yield
    finally:
        command.cleanups.remove(cleanup)


class _Holder:
    """The handler of the stop signals during `held()`: it notes them while `holding`; afterwards it
    hands any that still reach it to the handler it replaced, so that none is lost while handlers
    change. Within a command, a stop while another is held or being handled ends it at once."""

    def __init__(self, replaced: dict[int, Handler]) -> None:
        self.replaced = replaced
        self.holding = True
        self.held: list[int] = []

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if not self.holding:
            self.deliver(signum)
            return
        command = _command
        if command is not None and (command.signum is not None or self.held):
            command.end_at_once(signum)
            return
        self.held.append(signum)

    def deliver(self, signum: int) -> None:
        """Put the replaced handler back and raise the signal again, for it to act (a `Stopped`, a
        KeyboardInterrupt, the default action, nothing when it was ignored)."""
        signal.signal(signum, self.replaced[signum])
        signal.raise_signal(signum)


@contextmanager
def held() -> Iterator[None]:
    """Hold the stop signals back during the block, and deliver them after it. The handlers are
    replaced rather than the signals blocked: Python runs a handler in the main thread whichever thread
    the signal reached, so blocking it in one thread would not do. Outside the main thread, where
    handlers cannot be set, nothing is held (a step there must undo itself on any exception)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    replaced = {number: handler for number in STOP_SIGNALS if (handler := signal.getsignal(number)) is not None}
    holder = _Holder(replaced)
    try:
        for number in replaced:
            signal.signal(number, holder)
        yield
    finally:
        holder.holding = False
        for number in replaced:
            signal.signal(number, replaced[number])
        for number in dict.fromkeys(holder.held):
            holder.deliver(number)

"""Local worker processes that never outlive the evaluation that started them.

A `ProcessPoolExecutor` worker blocks on its task queue, whose pipe it holds both ends of, so it
never notices that its parent died: after a SIGTERM or SIGKILL to `tore evaluate` the workers lived
on, holding the caller's stdout and stderr open (and the caller hung waiting for them to close).
Here an interrupted evaluation terminates its workers at once, and every worker ends itself when
its parent dies: through the kernel on Linux (`PR_SET_PDEATHSIG`), and on every system by polling
its parent's pid.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import multiprocessing.context
import multiprocessing.process
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from tore_engine.core import signals
from tore_engine.core.layout import PageColumns, PagePart, PageSource
from tore_engine.io.leftovers import process_alive

PARENT_POLL_SECONDS = 1.0  # how often a worker checks that its parent is still alive
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
DEFAULT_SIGNALS = tuple(name for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
# Columns that local pools' forked workers hold in their copy of this process's memory, by id, with
# how many running pools inherit each (two evaluations in threads may share a layout set)
_INHERITED: dict[int, PageColumns] = {}
_INHERITORS: Counter[int] = Counter()


@dataclass(frozen=True)
class InheritedPart:
    """Pages of columns that a forked worker holds already (`worker_pool(inherited=...)`): a task
    names them instead of carrying them, which cost 3.6 KB a page of 40 boxes (0.93 MB a task of 256
    pages) pickled, piped and unpickled again while the worker waited (benchmarks/RESULTS.md)."""

    source: int  # the id of the columns in the driver: their key in the worker's copy of `_INHERITED`
    positions: np.ndarray

    def columns(self) -> PageColumns:
        return _INHERITED[self.source].part(self.positions)


@contextmanager
def _inheriting(sources: Sequence[PageSource]) -> Iterator[frozenset[int]]:
    """The ids of `sources` that are columns, held in `_INHERITED` meanwhile."""
    shared = [source for source in sources if isinstance(source, PageColumns)]
    for source in shared:
        _INHERITED[id(source)] = source
        _INHERITORS[id(source)] += 1
    try:
        yield frozenset(map(id, shared))
    finally:
        for source in shared:
            _INHERITORS[id(source)] -= 1
            if not _INHERITORS[id(source)]:
                del _INHERITED[id(source)], _INHERITORS[id(source)]


def task_part(executor: Executor | None, source: PageSource, positions: np.ndarray) -> PagePart:
    """The pages at `positions` of `source` as a task for `executor` carries them: named when it is a
    `worker_pool` whose workers inherit `source`, else `source.part` (columns, or byte ranges)."""
    inherited = executor.inherited if isinstance(executor, _StopSafePool) else frozenset()
    return InheritedPart(id(source), positions) if id(source) in inherited else source.part(positions)


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent ends (any other system: no-op)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # no usable libc: the polling thread still ends the worker


def _poll_parent(parent: int) -> None:
    while True:
        time.sleep(PARENT_POLL_SECONDS)
        if os.getppid() != parent:
            os._exit(1)  # reparented: the parent is gone, and nobody will read our results


def _watch_parent(driver: int) -> None:
    """Pool initializer. Ctrl-C is the driver's to handle (it stops the workers): a worker ignores
    it instead of printing its own traceback, and a forked worker drops the driver's other signal
    handlers, so that being terminated ends it without a word. `driver` is the evaluating process;
    the worker's direct parent is the driver, or a fork server that ends with it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in DEFAULT_SIGNALS:
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    _die_with_parent()
    parent = os.getppid()
    if parent != driver and not process_alive(driver):
        os._exit(1)  # the driver died before this worker could watch it
    threading.Thread(target=_poll_parent, args=(parent,), name="tore-parent-watch", daemon=True).start()


class _RecordingContext(multiprocessing.context.BaseContext):
    """A multiprocessing context that remembers every process it makes, for the pool to use. The
    pool's own record of its workers is written only after a worker has started: a stop signal
    between the two left a started worker that nothing killed, and the driver's exit, which joins
    its children, waited for it forever. It is the default context otherwise: its start method,
    its processes, and what `BaseContext` lacks; the locks and queues `BaseContext` makes read
    the start method from it."""

    def __init__(self) -> None:
        self._context = multiprocessing.get_context()
        self.processes: list[multiprocessing.process.BaseProcess] = []

    def Process(self, *args: Any, **kwargs: Any) -> multiprocessing.process.BaseProcess:  # noqa: N802 - the name the pool calls
        process = self._context.Process(*args, **kwargs)
        self.processes.append(process)
        return process

    def get_start_method(self, allow_none: bool = False) -> str:
        return self._context.get_start_method(allow_none)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


def _kill(context: _RecordingContext) -> None:
    """SIGKILL every started worker (one whose start was cut short has no pid, nor a join at exit):
    a worker forked a moment ago may still carry the driver's SIGTERM handler."""
    for process in context.processes:
        if process.pid is not None:
            process.kill()


def _terminate(pool: ProcessPoolExecutor, context: _RecordingContext) -> None:
    """Stop every worker now, without waiting for the batches they are running. The shutdown then
    returns at once (the pool sees its workers gone) and must be waited for: a pool thread still
    closing its pipes at interpreter exit makes CPython 3.11 print "Bad file descriptor".

    A worker killed while it sends a result leaves half a message in the results pipe, which the
    pool's thread goes on reading for ever: this process holds a write end of that pipe too, so the
    read never ends (a stopped `tore evaluate` hung in the shutdown; CPython 3.11 to 3.13). Closing
    that write end once the workers are killed ends the read (end of file): the pool sees itself
    broken and shuts down."""
    _kill(context)
    results = getattr(pool, "_result_queue", None)  # CPython's; absent elsewhere, where nothing is closed
    writer = getattr(results, "_writer", None)
    if writer is not None:
        writer.close()
    pool.shutdown(wait=True, cancel_futures=True)


class _StopSafePool(ProcessPoolExecutor):
    """A process pool whose start cannot be cut in two by a stop signal. Its first `submit` forks the
    workers, then makes and starts the thread that watches them: a stop between the two left a
    thread that was never started, which the shutdown could not join ("cannot join thread before it
    is started") or waited for with its workers for ever. Each submit runs with the stops held.
    `inherited`: the ids of the columns its workers inherit (`task_part`)."""

    inherited: frozenset[int] = frozenset()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        with signals.held():
            return super().submit(fn, *args, **kwargs)


@contextmanager
def worker_pool(workers: int, inherited: Sequence[PageSource] = ()) -> Iterator[ProcessPoolExecutor]:
    """A process pool whose workers end with the evaluation: normally after their last batch, at
    once when the evaluation is interrupted (an exception, a signal turned into one), and by
    themselves when this process dies without a word (SIGKILL). Its start and its shutdown hold the
    stop signals back (`_StopSafePool`); a second stop while they run kills the workers and ends
    the process at once. Forked workers (the first `submit` forks them) inherit the `inherited`
    columns, which its tasks then name (`task_part`); workers started otherwise (a fork server,
    spawn) are sent them."""
    context = _RecordingContext()
    pool = _StopSafePool(max_workers=workers, mp_context=context, initializer=_watch_parent, initargs=(os.getpid(),))
    gc.freeze()  # what the workers inherit stays shared: the collector never writes to it in them
    try:
        with signals.at_once(lambda: _kill(context)), _inheriting(inherited if context.get_start_method() == "fork" else ()) as ids:
            pool.inherited = ids
            try:
                yield pool
            except BaseException:
                with signals.held():
                    _terminate(pool, context)
                raise
            with signals.held():
                pool.shutdown(wait=True)
    finally:
        gc.unfreeze()

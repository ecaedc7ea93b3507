"""Connecting to a Dask cluster, for datasets that outgrow one machine.

The engine only needs a `concurrent.futures.Executor`; a Dask client's `get_executor()` is one, so
pages go to the cluster in the same batches as to local processes, with the same result.

Two waits are bounded here that Dask leaves open: its connection handshake reads without a
timeout (a port that accepts and never answers, or speaks HTTP, hung `Client()` for minutes), and
a task waits forever on a cluster without workers. A scheduler lost during a run (the client gives
up reconnecting after `CONNECT_TIMEOUT_SECONDS`, and Dask cancels every task) ends it with an
`InputError` that says so, and the CLI keeps distributed's own log lines off its stderr.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, InvalidStateError
from contextlib import contextmanager
from functools import partial
from typing import Any, ParamSpec, TypeVar

from tore_engine.core.errors import InputError
from tore_engine.core.extras import install_command

P = ParamSpec("P")
T = TypeVar("T")

CONNECT_TIMEOUT_SECONDS = 10  # to connect to the scheduler and hear its handshake
NO_WORKERS_TIMEOUT_SECONDS = 60  # how long an evaluation waits while the cluster has no worker
WORKER_POLL_SECONDS = 2  # how often the worker count is asked for meanwhile


def _check_handshake(address: str) -> None:
    """Connect once and read the scheduler's handshake, all within `CONNECT_TIMEOUT_SECONDS`."""
    import asyncio

    from distributed.comm import connect

    async def handshake() -> None:
        comm = await connect(address, timeout=CONNECT_TIMEOUT_SECONDS)
        await comm.close()

    try:
        asyncio.run(asyncio.wait_for(handshake(), CONNECT_TIMEOUT_SECONDS))
    except (asyncio.TimeoutError, TimeoutError):
        raise InputError(
            f"cannot reach the Dask scheduler at {address}: no Dask handshake within {CONNECT_TIMEOUT_SECONDS} s "
            "(nothing listening there, or not a Dask scheduler)"
        ) from None
    except Exception as error:  # a port speaking another protocol fails in many ways
        raise InputError(f"cannot reach the Dask scheduler at {address}: {error or type(error).__name__}") from None


def dask_client(address: str) -> Any:
    """A `distributed.Client` connected to the scheduler at `address`; an `InputError` when Dask is
    missing or the scheduler cannot be reached within `CONNECT_TIMEOUT_SECONDS`."""
    try:
        from distributed import Client
    except ImportError:
        raise InputError(f"a Dask scheduler needs Dask: {install_command('dask')}") from None
    _check_handshake(address)
    try:
        return Client(address, timeout=f"{CONNECT_TIMEOUT_SECONDS}s")
    except (OSError, TimeoutError, ValueError) as error:
        raise InputError(f"cannot reach the Dask scheduler at {address}: {error}") from None


class WatchedExecutor(Executor):
    """An executor whose futures fail with a clear error, instead of pending forever, once the
    cluster behind it has had no worker for `NO_WORKERS_TIMEOUT_SECONDS`, and instead of Dask's bare
    cancellation when it has lost its scheduler. `connected` says whether the client still has one."""

    def __init__(self, inner: Executor, worker_count: Callable[[], int], address: str,
                 connected: Callable[[], bool] = lambda: True) -> None:
        self._inner = inner
        self._worker_count = worker_count
        self._address = address
        self._connected = connected
        self._pending: set[Future] = set()
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        threading.Thread(target=self._watch, name="tore-dask-watch", daemon=True).start()

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        outer: Future[T] = Future()
        outer.add_done_callback(self._forget)
        with self._lock:
            self._pending.add(outer)
        self._inner.submit(fn, *args, **kwargs).add_done_callback(partial(self._relay, outer))
        return outer

    def _relay(self, outer: Future, inner: Future) -> None:
        """Settle `outer` as `inner` ended, unless the watchdog failed it first. Nothing here cancels
        a task: Dask cancels them all when the client loses its scheduler (or the cluster restarts)."""
        try:
            if inner.cancelled():
                outer.set_exception(InputError(
                    f"the Dask scheduler at {self._address} stopped answering during the run (or the cluster was "
                    "restarted), and this run's tasks were lost with it; start the scheduler again "
                    "(dask scheduler), or run without --scheduler"
                ))
            elif inner.exception() is not None:
                outer.set_exception(inner.exception())
            else:
                outer.set_result(inner.result())
        except InvalidStateError:
            pass

    def _forget(self, future: Future) -> None:
        with self._lock:
            self._pending.discard(future)

    def _workers(self) -> int:
        try:
            return self._worker_count()
        except Exception:  # the scheduler is gone or does not answer: no worker either
            return 0

    def _watch(self) -> None:
        idle_since = None
        while not self._stopped.wait(WORKER_POLL_SECONDS):
            if self._workers() > 0:
                idle_since = None
                continue
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= NO_WORKERS_TIMEOUT_SECONDS:
                self._fail_pending()
                idle_since = None

    def _fail_pending(self) -> None:
        with self._lock:
            pending = list(self._pending)
        for future in pending:
            try:
                future.set_exception(InputError(
                    f"the Dask cluster at {self._address} has had no worker for {NO_WORKERS_TIMEOUT_SECONDS} s; "
                    f"start one (dask worker {self._address}) or run without --scheduler"
                ))
            except InvalidStateError:
                pass

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._stopped.set()
        try:
            self._inner.shutdown(wait=wait)  # without waiting, Dask's executor cancels what is left, through the scheduler
        except Exception:
            if self._connected():
                raise
            # the client has lost its scheduler, and with it every task there: nothing is left to cancel


def watched_executor(client: Any, address: str) -> "WatchedExecutor":
    """A connected client's executor, whose tasks fail clearly when the cluster stays without workers."""
    return WatchedExecutor(client.get_executor(), lambda: len(client.nthreads(callback_timeout=CONNECT_TIMEOUT_SECONDS)), address,
                           connected=lambda: client.status == "running")


@contextmanager
def quiet_dask_logs() -> Iterator[None]:
    """distributed's loggers silenced, and restored on exit. Its import gives them a handler on
    stderr, where a lost scheduler then adds lines ("Failed to reconnect to scheduler ...") to the
    one paragraph that the run's error already is."""
    try:
        import distributed  # noqa: F401 - the import sets the levels that are overridden here
    except ImportError:
        pass  # `dask_client` says what to install
    names = [name for name in list(logging.Logger.manager.loggerDict) if name.startswith("distributed.")]
    loggers = [logging.getLogger(name) for name in ["distributed", *names]]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


@contextmanager
def cluster_executor(address: str) -> Iterator[Executor]:
    """The executor of a Dask cluster, connected within `CONNECT_TIMEOUT_SECONDS`, whose tasks fail
    clearly when the cluster stays without workers or loses its scheduler; closed on exit, whatever
    happened, without a line of distributed's own logging."""
    with quiet_dask_logs(), dask_client(address) as client:
        executor = watched_executor(client, address)
        try:
            yield executor
        finally:
            executor.shutdown(wait=False)

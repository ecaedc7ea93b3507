"""Numba set-up for TORE's page kernel, without importing numba until the kernel is wanted.

- **Cache folder.** Numba's disk cache lives in a per-user folder, `$XDG_CACHE_HOME/tore-studio/numba`
  (else `~/.cache/tore-studio/numba`, else one in the temporary directory when the home folder is not
  writable): an installed package's own folder is often read-only, and one folder lets every worker
  of a pool load what one process compiled. It is set through `NUMBA_CACHE_DIR` just before numba
  is first imported, unless the user has set that variable; nothing is created before it is needed.
- **Lazy compilation.** `Kernels` collects plain Python functions and turns them into numba
  functions on first use, so importing `tore_engine` costs no numba import (about 0.15 s), and runs
  without numba at all.
- **Fork-safe.** A forked process gets numba's and LLVM's locks as they were at the fork: a worker
  forked while another thread compiled (the app's warm-up, on a cold cache) waited forever on them.
  All our numba work holds one process-wide lock, which a fork waits for (`os.register_at_fork`);
  the child starts with a fresh one.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

CACHE_ENV = "NUMBA_CACHE_DIR"
APP_FOLDER = "tore-studio"
LOCK_NAME = "compile.lock"

if sys.platform == "win32":  # pragma: no cover - two processes may both compile a cold cache: slower, not wrong
    fcntl = None
else:
    import fcntl


_numba_work = threading.RLock()  # held while this process imports, inspects, loads or compiles with numba


def _fresh_lock_in_child() -> None:
    global _numba_work
    _numba_work = threading.RLock()


if hasattr(os, "register_at_fork"):  # not on Windows, which does not fork
    os.register_at_fork(before=lambda: _numba_work.acquire(), after_in_parent=lambda: _numba_work.release(),
                        after_in_child=_fresh_lock_in_child)


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def default_cache_folder() -> Path:
    """`$XDG_CACHE_HOME/tore-studio/numba` (`~/.cache/tore-studio/numba` when that variable is
    unset), created if need be, when it is writable; else a per-user folder in the temporary
    directory (numba tries its own places when that fails too)."""
    home_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / APP_FOLDER / "numba"
    user = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    temporary = Path(tempfile.gettempdir()) / f"{APP_FOLDER}-{user}" / "numba"
    return home_cache if _writable(home_cache) else temporary


def use_cache_folder() -> Path:
    """Point numba at our cache folder unless the user chose one; returns the folder in use."""
    if not os.environ.get(CACHE_ENV):
        os.environ[CACHE_ENV] = str(default_cache_folder())  # inherited by worker processes too
        if "numba" in sys.modules:  # imported before us: its config has already read the variable
            sys.modules["numba"].config.CACHE_DIR = os.environ[CACHE_ENV]
    return Path(os.environ[CACHE_ENV])


def numba_available() -> bool:
    """Whether numba is installed (it may be missing after `pip install --no-deps`)."""
    return importlib.util.find_spec("numba") is not None


@contextlib.contextmanager
def compile_lock(wait: bool = False, lock_name: str = LOCK_NAME) -> Iterator[bool]:
    """Take the cache folder's lock (without waiting unless `wait`): True when this process holds
    it, so that of the workers of a pool only one loads or compiles at a time, and the others can
    go on without the kernel meanwhile instead of compiling too."""
    folder = use_cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / lock_name, "a+b") as handle:
        if fcntl is None:  # pragma: no cover - Windows
            yield True
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


HELPERS_CALLED_ONLY_FROM_KERNELS = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


class Kernels:
    """Plain Python functions of one module that become numba functions on first use.

    Helpers are compiled into the one entry point, which alone is cached on disk: loading it from
    the cache needs no helper compiled. Until then every function stays plain Python. Threads
    may share it (the app evaluates in threads): it is made and loaded under the process's numba
    lock (see the module's docstring).

    `borrowing=True` compiles the helpers without numba's reference counting (its `_nrt=False`):
    for helpers that only read and write the arrays they are given, never making one, it saves
    the two atomic operations a call and an array that numba spends otherwise (a parser that
    calls small helpers for every token runs 4x faster). Every entry runs without the GIL (numba's
    `nogil`: it touches no Python object), so other threads run Python meanwhile: two files parse
    at once, and the app's server answers (`/_stcore/health` waited 1.7 s behind mAP's matching of
    a page of a million boxes when it held the GIL).

    Helpers are called only from the entry, never from Python, so numba makes them no wrapper for
    Python or C callers (`HELPERS_CALLED_ONLY_FROM_KERNELS`): 15 % of a cold compile
    (benchmarks/RESULTS.md).
    """

    def __init__(self, *, borrowing: bool = False) -> None:
        self._helper_options = {**({"_nrt": False} if borrowing else {}), **HELPERS_CALLED_ONLY_FROM_KERNELS}
        self._helpers: list[Callable] = []
        self._entry: Callable | None = None
        self._signature: Callable | None = None
        self._dispatcher = None

    def helper(self, function: Callable) -> Callable:
        self._helpers.append(function)
        return function

    def entry(self, signature: Callable) -> Callable[[Callable], Callable]:
        """The cached entry point; `signature(numba.types)` gives its argument types."""

        def register(function: Callable) -> Callable:
            self._entry, self._signature = function, signature
            return function

        return register

    def _jitted(self):
        """The entry's numba dispatcher, made once."""
        with _numba_work:
            if self._dispatcher is None:
                self._make_dispatcher()
        return self._dispatcher

    def _make_dispatcher(self) -> None:
        """Rebind the helpers to numba functions first: numba resolves the names that the entry
        calls from its module's globals."""
        use_cache_folder()
        numba = importlib.import_module("numba")
        for function in self._helpers:
            function.__globals__[function.__name__] = numba.njit(**self._helper_options)(function)
        assert self._entry is not None and self._signature is not None, "Kernels.entry registers the entry point"
        self._argument_types = self._signature(numba.types)
        self._dispatcher = numba.njit(cache=True, nogil=True)(self._entry)
        self._stamp_helpers_files(self._dispatcher)

    def _stamp_helpers_files(self, dispatcher: Any) -> None:
        """numba keys an entry's disk cache by the content of the entry's own source file: a helper
        borrowed from another file (TIDE's box kernel calls mAP's IoU) could change without the cache
        noticing, and a clone updated by `git pull`, or an upgrade, would go on running the old
        helper. The key takes the content of every helper's file in too. This sets numba's internal
        stamp (numba 0.59 to 0.68, tests/core/test_jit.py); anything unexpected leaves numba's own."""
        entry_file = inspect.getsourcefile(cast(Callable, self._entry))
        others = sorted({inspect.getsourcefile(function) or "" for function in self._helpers} - {entry_file, ""})
        if not others:
            return
        try:
            cache_file = dispatcher._cache._cache_file
            digest = hashlib.sha256(b"".join(Path(path).read_bytes() for path in others)).hexdigest()
            cache_file._source_stamp = (cache_file._source_stamp, digest)
        except (AttributeError, OSError):
            pass

    def is_cached(self) -> bool:
        """Whether the disk cache holds the entry for this machine, read from numba's index without
        loading or compiling anything. This reads numba internals (checked on 0.59 to 0.68, the
        versions pyproject.toml allows; tests/core/test_jit.py), so any surprise counts as not
        cached: the caller then treats the cache as cold, which is only slower."""
        dispatcher = self._jitted()
        try:
            with _numba_work:  # the key asks LLVM for the machine (its lock)
                cache = dispatcher._cache
                key = cache._index_key(self._argument_types, dispatcher.targetctx.codegen())
                return key in cache._cache_file._load_index()
        except Exception:  # noqa: BLE001 - see the docstring
            return False

    @property
    def loaded(self) -> bool:
        return self._dispatcher is not None and bool(self._dispatcher.signatures)

    def load(self) -> Callable:
        """The compiled entry, loaded from the disk cache or compiled (and saved there); no other
        signature is ever compiled, so a call with wrongly typed arrays fails instead."""
        dispatcher = self._jitted()
        with _numba_work:
            if not self.loaded:
                with _cache_loads_without_refresh(dispatcher):
                    dispatcher.compile(self._argument_types)
                dispatcher.disable_compile()
        return self._call

    def _call(self, *arguments: Any) -> Any:
        """The compiled entry, called. A stop signal whose handler ran as numba handed the result
        back (Ctrl-C, or `tore evaluate`'s SIGTERM turned into `Stopped`) leaves as that stop, not
        as the SystemError CPython wraps it in ("CPUDispatcher(...) returned a result with an
        exception set"), which the command line reported as an internal error, exit 2."""
        dispatcher = cast(Callable, self._dispatcher)  # set by `load`, which hands this method out
        try:
            return dispatcher(*arguments)
        except SystemError as error:
            stop = error.__cause__
            if stop is not None and not isinstance(stop, Exception):
                raise stop from None
            raise


@contextlib.contextmanager
def _cache_loads_without_refresh(dispatcher: Any) -> Iterator[None]:
    """Load the dispatcher's entry from the disk cache without numba's `refresh` of its target
    context, which imports and registers every lowering numba has (NumPy's, the typed containers',
    the random generators' ..., and a probe for SciPy's BLAS): what a compile needs, but of a
    cached entry's machine code only the runtime's symbols (`rtsys.initialize`). That refresh was
    0.3-0.4 s of every process's first kernel load, a third of a 1,000-page `tore evaluate`
    (benchmarks/RESULTS.md). A miss still compiles as numba does (its compiler refreshes the
    context first), and a cached entry that fails to load this way is loaded numba's way."""
    from numba.core.runtime import rtsys

    cache = dispatcher._cache
    numbas_way = cache.load_overload

    def load_overload(signature: Any, target_context: Any) -> Any:
        try:
            rtsys.initialize(target_context)
            return cache._load_overload(signature, target_context)
        except Exception:  # noqa: BLE001 - numba's own load says what is wrong, if anything is
            return numbas_way(signature, target_context)

    cache.load_overload = load_overload  # this dispatcher's cache only, for this load
    try:
        yield
    finally:
        del cache.load_overload


def load_pays_off(pages: int, pages_paying_numbas_import: int) -> bool:
    """Whether loading a kernel from a warm cache pays off for a job of `pages` pages. With numba
    imported already (a compiled reader read the input, or another kernel is loaded), a load is
    0.01-0.05 s (`_cache_loads_without_refresh`), which a few pages of any NumPy path cost: at once.
    Otherwise numba's import (about 0.3 s) must be paid too: from `pages_paying_numbas_import`,
    which each kernel's module sets by its NumPy path's cost a page (benchmarks/RESULTS.md)."""
    return "numba" in sys.modules or pages >= pages_paying_numbas_import


def notice(what: str, seconds: float) -> None:
    """The one line said before a cold compile, so a user knows why this run waits."""
    print(f"compiling {what} once, about {seconds:g} s; later runs load it from {use_cache_folder()}", file=sys.stderr)


def prepared(kernels: Kernels, what: str, seconds: float, size: int, compile_min_bytes: int, lock_name: str = LOCK_NAME) -> bool:
    """Whether `kernels` serve an input of `size` bytes: when they are loaded or cached, or, on a
    cold cache, when the input is large enough (`compile_min_bytes`) to pay for a compile, which
    then happens after the notice; small jobs never wait for one."""
    if kernels.loaded:
        return True
    if not numba_available():
        return False
    return ready(kernels, what, seconds, wait=True, may_compile=size >= compile_min_bytes, lock_name=lock_name) is not None


def warm(kernels: Kernels, what: str, seconds: float, *, without_numba: str, lock_name: str = LOCK_NAME) -> str:
    """Load `kernels` from the cache folder, compiling them there first when it is cold; says which
    and how long it took (`without_numba` when numba is not installed)."""
    if not numba_available():
        return without_numba
    start = time.perf_counter()
    how = ready(kernels, what, seconds, wait=True, may_compile=True, lock_name=lock_name)
    return f"{what} {how} in {time.perf_counter() - start:.2f} s ({use_cache_folder()})"


def ready(kernels: Kernels, what: str, seconds: float, *, wait: bool, may_compile: bool, lock_name: str = LOCK_NAME) -> str | None:
    """Load `kernels` from the disk cache, or compile them into it (after the notice) if
    `may_compile`; one process at a time, the others not waiting unless `wait`. Returns "loaded"
    or "compiled", or None when it did neither."""
    with compile_lock(wait=wait, lock_name=lock_name) as holding:
        if not holding:
            return None
        cached = kernels.is_cached()
        if not cached and not may_compile:
            return None
        if not cached:
            notice(what, seconds)
        kernels.load()
    return "loaded" if cached else "compiled"

"""The compiled kernels' cache folder (tore_engine.core.jit): per user, unless NUMBA_CACHE_DIR says otherwise,
and the temporary folder when the home folder is unusable; and what `Kernels` reads of numba's private
APIs (its cache index, helper options) on the installed numba."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tore_engine.core import jit


@pytest.fixture
def numba_config(monkeypatch):
    """`use_cache_folder` also points an already imported numba at the folder: restore that."""
    if "numba" in sys.modules:
        monkeypatch.setattr(sys.modules["numba"].config, "CACHE_DIR", sys.modules["numba"].config.CACHE_DIR)


def test_the_cache_folder_is_per_user_unless_numba_cache_dir_is_set(monkeypatch, tmp_path, numba_config):
    monkeypatch.delenv(jit.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert jit.use_cache_folder() == tmp_path / "xdg" / "tore-studio" / "numba" == Path(os.environ[jit.CACHE_ENV])
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert jit.default_cache_folder() == tmp_path / "home" / ".cache" / "tore-studio" / "numba"
    monkeypatch.setenv(jit.CACHE_ENV, str(tmp_path / "mine"))
    assert jit.use_cache_folder() == tmp_path / "mine"


def test_an_unusable_home_falls_back_to_the_temporary_folder(monkeypatch, tmp_path):
    home = tmp_path / "home"
    home.write_text("a file, not a folder: nothing can be made in it, even by root")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(jit.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    assert jit.default_cache_folder() == tmp_path / "tmp" / f"tore-studio-{os.getuid()}" / "numba"


PROBE_KERNELS = """
from tore_engine.core.jit import Kernels

kernels = Kernels(borrowing=True)


@kernels.helper
def _twice(x):
    return 2 * x


@kernels.entry(lambda types: (types.int64,))
def entry(x):
    return _twice(x) + 1
"""

PROBE = """
import sys
sys.path.insert(0, sys.argv[1])
import probe_kernels
before = probe_kernels.kernels.is_cached()
print(before, probe_kernels.kernels.load()(20), probe_kernels.kernels.is_cached())
"""


def test_is_cached_reads_numbas_index_on_the_installed_numba(tmp_path):
    """`Kernels.is_cached` reads numba's private cache index (the reason numba is capped in
    pyproject.toml): False on a cold cache, True once one process compiled, in the next process
    before it loads anything. A numba whose internals moved would say False every time (slower
    runs, never wrong ones): this test says so instead."""
    pytest.importorskip("numba", reason="numba is not installed: the kernels are not used")
    (tmp_path / "probe_kernels.py").write_text(PROBE_KERNELS)
    assert _probe(PROBE, tmp_path) == "False 41 True"  # cold: compiled, then found in the index
    assert _probe(PROBE, tmp_path) == "True 41 True"  # warm: found before loading


def _probe(script: str, folder: Path) -> str:
    """What `script` prints, run in a new process on the modules in `folder`, its cache folder there."""
    env = {**os.environ, jit.CACHE_ENV: str(folder / "cache")}
    result = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


LENT_HELPER = """
def lent(x):
    return 2 * x
"""

BORROWING_KERNELS = """
import types
import lending
from tore_engine.core.jit import Kernels

kernels = Kernels(borrowing=True)
lent = kernels.helper(types.FunctionType(lending.lent.__code__, globals(), "lent"))  # as box_kernel borrows mAP's IoU


@kernels.entry(lambda types: (types.int64,))
def entry(x):
    return lent(x) + 1
"""

BORROW = """
import sys
sys.path.insert(0, sys.argv[1])
import borrowing_kernels
print(borrowing_kernels.kernels.is_cached(), borrowing_kernels.kernels.load()(20))
"""


def test_a_helper_borrowed_from_another_file_renews_the_cache_when_that_file_changes(tmp_path):
    """numba keys the disk cache by the entry's own file: a helper from another file (TIDE's box
    kernel calls mAP's IoU) changed there left the cached entry running the old helper, after a
    `git pull` or an upgrade that did not touch the entry's file. The key takes the helper's file in."""
    pytest.importorskip("numba", reason="numba is not installed: the kernels are not used")
    (tmp_path / "lending.py").write_text(LENT_HELPER)
    (tmp_path / "borrowing_kernels.py").write_text(BORROWING_KERNELS)
    assert _probe(BORROW, tmp_path) == "False 41" and _probe(BORROW, tmp_path) == "True 41"  # compiled, then loaded
    (tmp_path / "lending.py").write_text(LENT_HELPER.replace("2 * x", "3 * x"))
    assert _probe(BORROW, tmp_path) == "False 61" and _probe(BORROW, tmp_path) == "True 61"  # the helper's change noticed: compiled again


ALLOCATING_KERNELS = """
import numpy as np
from tore_engine.core.jit import Kernels

kernels = Kernels()


@kernels.entry(lambda types: (types.int64,))
def entry(n):
    squares = np.empty(n, np.int64)  # numba's runtime allocates it: its symbols must be linked
    for k in range(n):
        squares[k] = k * k
    return squares
"""

LOAD = """
import sys
sys.path.insert(0, sys.argv[1])
if sys.argv[2] == "failing":  # the first load fails (as without the refresh): numba's own load must take over
    from numba.core.caching import Cache
    loads = []
    load = Cache._load_overload
    def failing_once(self, signature, context):
        loads.append(signature)
        if len(loads) == 1:
            raise RuntimeError("a symbol the refresh would have registered")
        return load(self, signature, context)
    Cache._load_overload = failing_once
import allocating_kernels
squares = allocating_kernels.kernels.load()(5)
print(allocating_kernels.kernels.is_cached(), squares.tolist(), "numba.np.arraymath" in sys.modules)
"""


@pytest.mark.skipif(not jit.numba_available(), reason="numba is not installed: the kernels are not used")
def test_a_cached_entry_loads_without_numbas_refresh_and_runs(tmp_path):
    """A warm load skips numba's refresh of its target context (which imports every lowering
    module numba has, `numba.np.arraymath` among them: 0.3-0.4 s of each process's first load)
    and still links numba's runtime (the entry allocates an array); when that load fails,
    numba's own load (with the refresh) gives the same entry."""
    (tmp_path / "allocating_kernels.py").write_text(ALLOCATING_KERNELS)
    env = {**os.environ, jit.CACHE_ENV: str(tmp_path / "cache")}

    def run(how: str) -> str:
        result = subprocess.run([sys.executable, "-c", LOAD, str(tmp_path), how], capture_output=True, text=True, env=env, timeout=300)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    assert run("light") == "True [0, 1, 4, 9, 16] True"  # cold: compiled (which refreshes)
    assert run("light") == "True [0, 1, 4, 9, 16] False"  # warm: loaded, nothing of the compiler's imported
    assert run("failing") == "True [0, 1, 4, 9, 16] True"  # warm, the light load failing: numba's load


FORK_DURING_COMPILE = """
import concurrent.futures, multiprocessing, threading, time
from tore_engine.formats import page_parser
from tore_engine.io import json_compiled

compiling = threading.Thread(target=page_parser.warm)  # the app's warm-up, on a cold cache
compiling.start()
time.sleep(1.0)  # numba imported, the parser compiling: its locks held
with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
    print(pool.submit(json_compiled.warm).result())  # the forked worker compiles too
compiling.join()
"""


@pytest.mark.skipif(not jit.numba_available() or not hasattr(os, "fork"), reason="needs numba and fork")
def test_a_worker_forked_while_another_thread_compiles_does_not_wait_forever(tmp_path):
    """A fresh server's first evaluation forked its workers while the warm-up thread compiled: they
    inherited numba's compiler lock held and waited forever (seen on a cold cache at 20,000 pages)."""
    environment = {**os.environ, jit.CACHE_ENV: str(tmp_path / "cold")}  # a cold cache: everything compiles
    process = subprocess.Popen([sys.executable, "-c", FORK_DURING_COMPILE], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the worker too
        process.communicate()
        pytest.fail("the forked worker waited on the lock its parent's compiling thread held")
    assert process.returncode == 0, err
    assert "compiled" in out


def test_a_stop_handled_as_a_kernel_returns_leaves_as_the_stop():
    """CPython reports an exception set while a C function returned a result as SystemError, its
    cause the exception: a SIGTERM handled as numba handed back a kernel's result made `tore
    evaluate` exit 2 with "internal error (SystemError: CPUDispatcher(<function _accumulate ...>)
    returned a result with an exception set)" (seen stopping 12,000 pages under load); the stop
    itself must leave, and any other SystemError stay as it is."""
    class Stop(BaseException):
        pass

    def returned_with(cause: BaseException):
        def dispatcher(*_):
            raise SystemError("CPUDispatcher(<function k>) returned a result with an exception set") from cause
        return dispatcher

    kernels = jit.Kernels()
    kernels._dispatcher = returned_with(Stop())
    with pytest.raises(Stop):
        kernels._call(1)
    kernels._dispatcher = returned_with(ValueError("a bug"))
    with pytest.raises(SystemError):
        kernels._call(1)

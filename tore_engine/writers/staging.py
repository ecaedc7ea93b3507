"""The `--out` folder: checked before any work, held by one run at a time, written as one set.

A run's files are written into a staging folder inside `--out`, then moved into place by renames
(each atomic, on one file system). The swap is finished or undone whatever interrupts it:

- the stop signals (SIGINT, SIGTERM, SIGHUP) are held back during the few renames and delivered
  right after them (`core.signals.held`), so a `Stopped` or KeyboardInterrupt comes before the swap
  or after it;
- any exception in between (a failing rename, an error) undoes it: each file it moved aside goes
  back, each file it placed where there was none goes away;
- a run killed outright (SIGKILL, a power cut) cannot undo itself: its staging folder records what it
  did (the files moved aside in `PREVIOUS`, the names placed anew in `ADDED`), and the next run into
  the same `--out` (`tore_engine.io.leftovers`: only a folder of this host and user whose process has
  ended) undoes it the same way, unless the swap had finished (then `PREVIOUS` is renamed `REPLACED`).

A file moved aside is deleted only once the swap is done; one that could not be put back stays in its
staging folder, which is kept for the next run to try again. Files in `--out` that are not the run's
own are never touched: the folder is shared with whatever else the user keeps there; but the reports
another run wrote and this one does not (`stale`) go with the swap, so that the folder holds one run's.

Two runs into the same `--out` would mix their files, so a run holds `--out`'s lock (`LOCK_NAME`)
from its first check to its last read of its results; a second run fails at once, naming the first.
While it holds the lock, no file the run reads may be one of the results it replaces
(`files.OUTPUTS`), however the input reaches it (the path itself, a symbolic or hard link, a folder
of inputs).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from tore_engine.core import signals
from tore_engine.core.errors import InputError
from tore_engine.io import files, leftovers

if sys.platform != "win32":  # POSIX; elsewhere runs into one folder are not kept apart
    import fcntl

STAGING_PREFIX = ".tore-staging-"  # hidden folders inside --out; one a run, removed at its end
PREVIOUS = "previous"  # inside the staging folder: the files being replaced, until the swap is done
ADDED = "added"  # inside the staging folder: an empty file a name placed where there was none
REPLACED = "replaced"  # PREVIOUS once the swap is done: nothing to undo any more
LOCK_NAME = ".tore-lock"  # inside --out while a run holds it; its process id inside


def _problem(out: Path, error: OSError, consequence: str = "the files already there are unchanged") -> InputError:
    where = f" ({error.filename})" if error.filename and Path(error.filename) != out else ""
    return InputError(f"cannot write the results to --out {out}: {error.strerror or error}{where}; {consequence}")


def _missing_folders(out: Path) -> list[Path]:
    """`out` and its ancestors that do not exist yet, outermost first."""
    missing = []
    for folder in (out, *out.parents):
        if folder.exists():
            break
        missing.append(folder)
    return missing[::-1]


def _remove_empty(folders: list[Path]) -> None:
    """Undo the creation of `folders` (outermost first), as far as they are still empty."""
    for folder in reversed(folders):
        with suppress(OSError):
            folder.rmdir()


# --- the swap and its undo -----------------------------------------------------------------------


def _records(folder: Path) -> list[os.DirEntry]:
    """The entries of a record folder (`PREVIOUS`, `ADDED`) of a staging folder; none when it is
    missing, or is not a real folder (a planted link moves nothing from outside `--out`)."""
    try:
        if not stat.S_ISDIR(folder.lstat().st_mode):
            return []
        return sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return []


def _put_back(out: Path, moved: os.DirEntry) -> None:
    if moved.is_file(follow_symlinks=False):  # only what a run moved there
        os.replace(moved.path, out / moved.name)


def _take_away(out: Path, marker: os.DirEntry) -> None:
    placed = out / marker.name
    with suppress(FileNotFoundError):
        if stat.S_ISREG(placed.lstat().st_mode):
            os.unlink(placed)
    os.unlink(marker.path)


def _unfinished(staging: Path) -> bool:
    """Whether `staging` records a swap that began and did not finish: its `PREVIOUS` folder is there."""
    with suppress(OSError):
        return stat.S_ISDIR(os.lstat(staging / PREVIOUS).st_mode)
    return False


def _undo_swap(out: Path, staging: Path) -> list[str]:
    """Undo the unfinished swap that `staging` records: each file moved aside goes back over whatever
    took its place, each file placed where there was none is removed. Returns the names that could not
    be undone; they stay recorded, for a later run to try again."""
    if not _unfinished(staging):
        return []
    left = []
    for record, undo in ((PREVIOUS, _put_back), (ADDED, _take_away)):
        for entry in _records(staging / record):
            try:
                undo(out, entry)
            except OSError:
                left.append(entry.name)
    return left


@dataclass
class StagedOutput:
    """Where a run writes its files (`folder`) before `save` moves them into `out`."""

    out: Path
    names: Sequence[str]
    folder: Path
    left: list[str] = field(default_factory=list)  # what an undo could not put back: `folder` keeps it
    stale: Sequence[str] = ()  # what another run may have written and this one does not: removed by the swap

    def save(self, write: Callable[[Path], None]) -> None:
        """Run `write(folder)`, then move its files into `out` together."""
        try:
            write(self.folder)
            with signals.held():
                self._swap()
        except OSError as error:
            raise self._problem(error) from None

    def _swap(self) -> None:
        """Move each file of `out` aside and its new version in, and each `stale` file aside, so that
        `out` holds one run's files (a previous run's report.html beside this run's report.json would
        say what this run did not find); each step recorded (`PREVIOUS`, `ADDED`) before it is taken,
        all undone on any exception."""
        (self.folder / ADDED).mkdir()
        (self.folder / PREVIOUS).mkdir()  # from here on the swap is unfinished
        try:
            for name in self.names:
                target = self.out / name
                if os.path.lexists(target):
                    os.replace(target, self.folder / PREVIOUS / name)
                else:
                    (self.folder / ADDED / name).touch(exist_ok=False)
                os.replace(self.folder / name, target)
            for name in self.stale:
                with suppress(FileNotFoundError):
                    if stat.S_ISREG(os.lstat(self.out / name).st_mode):  # a run's file; a folder or link of that name is the user's
                        os.replace(self.out / name, self.folder / PREVIOUS / name)
            os.replace(self.folder / PREVIOUS, self.folder / REPLACED)  # finished
        except BaseException:
            self.left = _undo_swap(self.out, self.folder)
            raise

    def _problem(self, error: OSError) -> InputError:
        if not self.left:
            return _problem(self.out, error)
        return _problem(self.out, error, f"could not put back {', '.join(self.left)} (kept in {self.folder}; the next run "
                                         "into --out puts them back)")

    def discard(self) -> None:
        if not self.left:
            shutil.rmtree(self.folder, ignore_errors=True)


def _recover_abandoned(out: Path) -> None:
    """Undo the unfinished swaps of the runs killed in `out` and remove their staging folders; one
    that still holds a file it could not put back stays, for a later run to try again."""
    for staging in leftovers.abandoned(out, STAGING_PREFIX):
        if not _undo_swap(out, staging):
            shutil.rmtree(staging, ignore_errors=True)


def _check_names(out: Path, names: Sequence[str]) -> None:
    taken = [name for name in names if (out / name).is_dir()]
    if taken:
        raise InputError(f"cannot write the results to --out {out}: {', '.join(taken)} there is a folder, not a file")


# --- one run at a time -------------------------------------------------------------------------


def _same_file(descriptor: int, path: Path) -> bool:
    """Whether `path` (itself, not a link's target) is the file open as `descriptor`."""
    try:
        opened, named = os.fstat(descriptor), os.lstat(path)
    except FileNotFoundError:
        return False
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)


def _flock_holders(descriptor: int) -> set[int]:
    """The processes that hold a flock on the file open as `descriptor`, as Linux lists them in
    /proc/locks (none found elsewhere, or when it cannot be read)."""
    opened = os.fstat(descriptor)
    device = f"{os.major(opened.st_dev):02x}:{os.minor(opened.st_dev):02x}:{opened.st_ino}"
    holders = set()
    with suppress(OSError, ValueError):
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == device:
                holders.add(int(fields[4]))
    return holders


def _held(descriptor: int, path: Path, out: Path) -> InputError:
    """Why `out` is not free: a tore run holds its lock (the process id it wrote is a holder the
    system names, or the system names none), or another program does."""
    written = os.pread(descriptor, 24, 0).strip()
    holders = _flock_holders(descriptor)
    if written.isdigit() and (not holders or int(written) in holders):
        return InputError(f"another tore run is writing into --out {out} (process {written.decode()}); wait for it to end, or choose "
                          f"another --out (its lock file {path} goes when it ends)")
    named = f" (process {', '.join(map(str, sorted(holders)))})" if holders else ""
    return InputError(f"--out {out} is locked by a process that is not a tore run{named}: it holds the lock file {path}, which "
                      f"holds no tore run's process id; end that process, or choose another --out")


def _take(descriptor: int, path: Path, out: Path) -> bool:
    """Lock the lock file open as `descriptor` without waiting, and write this process's id in it;
    False when it is no longer the file at `path` (its holder removed it as it ended)."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _held(descriptor, path, out) from None
    if not _same_file(descriptor, path):
        return False
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
    return True


LOCK_KINDS = {stat.S_IFDIR: "a folder", stat.S_IFIFO: "a named pipe (FIFO)", stat.S_IFSOCK: "a socket", stat.S_IFLNK: "a symbolic link",
              stat.S_IFCHR: "a device", stat.S_IFBLK: "a device"}


def _not_a_lock(out: Path, path: Path, mode: int) -> InputError:
    kind = LOCK_KINDS.get(stat.S_IFMT(mode), "not a regular file")
    return InputError(f"cannot take the lock of --out {out}: its lock file {path} is {kind}, which no tore run makes (a run's lock "
                      f"is a regular file, removed when it ends); when no tore run is writing into --out, remove {path} and run again")


def _open_lock(out: Path, path: Path) -> int:
    """The lock file opened for reading and writing, made when missing; anything else under its
    name (a folder, a FIFO, a socket, a link, planted or left by another program) is refused
    before it is opened: it is never followed, and a FIFO never waited on."""
    with suppress(FileNotFoundError):
        if not stat.S_ISREG(mode := os.lstat(path).st_mode):
            raise _not_a_lock(out, path, mode)
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError:
        with suppress(OSError):
            if not stat.S_ISREG(mode := os.lstat(path).st_mode):  # put there since the check
                raise _not_a_lock(out, path, mode) from None
        raise
    if not stat.S_ISREG(mode := os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise _not_a_lock(out, path, mode)
    return descriptor


def _lock(out: Path) -> int | None:
    """Hold `out`'s lock: an exclusive `flock` on `LOCK_NAME`, taken without waiting (a second run
    fails at once, naming the process that holds it, rather than wait for a run that may take hours).
    The file is there only while a run holds it (`_unlock` removes it), holding that run's process id;
    a killed run leaves it behind, but the kernel releases a flock when its process ends, however it
    ends, so such a file holds nothing back and the next run takes it over. Anything else under that
    name (`_open_lock`) is refused, naming it and how to free `out`. Returns the descriptor that holds the lock (None where there is no flock)."""
    if sys.platform == "win32":  # pragma: no cover - Windows
        return None
    path = out / LOCK_NAME
    while True:
        descriptor = _open_lock(out, path)
        try:
            taken = _take(descriptor, path, out)
        except BaseException:
            os.close(descriptor)
            raise
        if taken:
            return descriptor
        os.close(descriptor)


def _unlock(out: Path, descriptor: int) -> None:
    """Remove the lock file while still holding it, so that `--out` keeps no trace of the run, then
    release it. A run that opened the file just before locks a file no longer at that path: `_take`
    sees it and opens the path again."""
    with suppress(OSError):
        if _same_file(descriptor, out / LOCK_NAME):
            os.unlink(out / LOCK_NAME)
    os.close(descriptor)


# --- no input is an output ---------------------------------------------------------------------


@contextmanager
def _outputs_refused(out: Path, names: Sequence[str]) -> Iterator[None]:
    """While the run holds `out`, its results already there are in `files.OUTPUTS` (by device and
    inode, after links), which every read of an input checks: a hard link to one is the same file,
    and a symbolic link or a folder of inputs leads to it. Refused even where the swap would only
    replace a link's name: reading a file the run is about to replace is never what was meant."""
    found = {}
    for name in names:
        with suppress(OSError):
            status = os.stat(out / name)
            found[(status.st_dev, status.st_ino)] = str(out / name)
    files.OUTPUTS.update(found)
    try:
        yield
    finally:
        for key in found:
            files.OUTPUTS.pop(key, None)


def _check_inputs(read: Sequence[Path]) -> None:
    """Check the files named on the command line now, before any work, as every read will."""
    for path in read:
        if files.is_regular_file(path):
            os.close(files.open_regular(path))


def _prepare(out: Path, names: Sequence[str], read: Sequence[Path], stale: Sequence[str], cleanup: ExitStack) -> StagedOutput:
    """Everything `staged_output` does before the run's work, each undone by `cleanup` in turn."""
    if out.exists() and not out.is_dir():
        raise InputError(f"cannot write the results to --out {out}: it exists and is not a folder")
    created = _missing_folders(out)
    out.mkdir(parents=True, exist_ok=True)
    cleanup.callback(_remove_empty, created)  # after a run that saved its files they are not empty
    if (lock := _lock(out)) is not None:
        cleanup.callback(_unlock, out, lock)
    _check_names(out, names)
    _recover_abandoned(out)
    cleanup.enter_context(_outputs_refused(out, names))
    _check_inputs(read)
    staging = StagedOutput(out, names, Path(tempfile.mkdtemp(prefix=leftovers.owned_prefix(STAGING_PREFIX), dir=out)), stale=stale)
    cleanup.callback(staging.discard)
    return staging


@contextmanager
def staged_output(out: Path, names: Sequence[str], read: Sequence[Path] = (), stale: Sequence[str] = ()) -> Iterator[StagedOutput]:
    """Before any work: check that `out` can take the files `names` (creating it when missing), take
    its lock, and check that none of the input files `read` is one of them. Then give the run its
    staging folder; its swap also removes the files `stale` (another run's that this one does not
    write). Afterwards the staging folder is gone (unless it keeps a file that could not be
    put back) and the lock released."""
    with ExitStack() as cleanup:
        try:
            staging = _prepare(out, names, read, stale, cleanup)
        except OSError as error:
            raise _problem(out, error) from None
        yield staging

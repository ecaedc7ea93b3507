"""The `--out` folder: checked before any work, written as one set.

A run's files are written into a staging folder inside `--out`, then moved into place by renames
(each atomic, on one file system); if a rename fails, the ones done are undone. So a full disk, a
read-only folder or a file name taken by a folder leaves the previous run's files as they were,
and a report never sits next to another run's CSVs. Files in `--out` that are not the run's own are
never touched: the folder is shared with whatever else the user keeps there.

A run that was killed leaves its staging folder; the next run into the same `--out` removes it
(`tore_engine.leftovers`: only a folder of this host and user whose process has ended), first
putting back any file of the previous run that the killed run had moved aside and not replaced.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from tore_engine import leftovers
from tore_engine.errors import InputError

STAGING_PREFIX = ".tore-staging-"  # hidden folders inside --out; one a run, removed at its end
PREVIOUS = "previous"  # inside the staging folder: the files being replaced, until the swap is done


def _problem(out: Path, error: OSError) -> InputError:
    where = f" ({error.filename})" if error.filename and Path(error.filename) != out else ""
    return InputError(f"cannot write the results to --out {out}: {error.strerror or error}{where}; the files already there are unchanged")


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


@dataclass
class StagedOutput:
    """Where a run writes its files (`folder`) before `save` moves them into `out`."""

    out: Path
    names: Sequence[str]
    folder: Path
    created: list[Path] = field(default_factory=list)  # folders this run made, to remove on failure
    saved: bool = False

    def save(self, write: Callable[[Path], None]) -> None:
        """Run `write(folder)`, then move its files into `out` together."""
        try:
            write(self.folder)
            self._swap()
        except OSError as error:
            raise _problem(self.out, error) from None
        self.saved = True

    def _swap(self) -> None:
        previous = self.folder / PREVIOUS
        previous.mkdir()
        moved, placed = [], []
        try:
            for name in self.names:
                target = self.out / name
                if os.path.lexists(target):
                    os.replace(target, previous / name)
                    moved.append(name)
                os.replace(self.folder / name, target)
                placed.append(name)
        except OSError:
            for name in reversed(placed):
                with suppress(OSError):
                    os.replace(self.out / name, self.folder / name)
            for name in reversed(moved):
                with suppress(OSError):
                    os.replace(previous / name, self.out / name)
            raise

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        if not self.saved:
            _remove_empty(self.created)


def _recover_abandoned(out: Path) -> None:
    """Remove the staging folders that killed runs left in `out`; a file one of them moved aside
    (`PREVIOUS`) goes back where it was when nothing took its place, so no earlier result is lost."""
    for staging in leftovers.abandoned(out, STAGING_PREFIX):
        previous = staging / PREVIOUS
        with suppress(OSError):
            if not previous.is_symlink() and previous.is_dir():  # only what a run put there: no link out of `out`
                for moved in previous.iterdir():
                    if stat.S_ISREG(moved.lstat().st_mode) and not os.path.lexists(out / moved.name):
                        os.replace(moved, out / moved.name)
        shutil.rmtree(staging, ignore_errors=True)


def _check_names(out: Path, names: Sequence[str]) -> None:
    taken = [name for name in names if (out / name).is_dir()]
    if taken:
        raise InputError(f"cannot write the results to --out {out}: {', '.join(taken)} there is a folder, not a file")


@contextmanager
def staged_output(out: Path, names: Sequence[str]) -> Iterator[StagedOutput]:
    """Check that `out` can take the files `names` (creating it when missing) before any work, and
    give the run its staging folder; whatever happens, the staging folder is gone afterwards."""
    created: list[Path] = []
    try:
        if out.exists() and not out.is_dir():
            raise InputError(f"cannot write the results to --out {out}: it exists and is not a folder")
        created = _missing_folders(out)
        out.mkdir(parents=True, exist_ok=True)
        _check_names(out, names)
        _recover_abandoned(out)
        staging = StagedOutput(out, names, Path(tempfile.mkdtemp(prefix=leftovers.owned_prefix(STAGING_PREFIX), dir=out)), created)
    except OSError as error:
        _remove_empty(created)
        raise _problem(out, error) from None
    try:
        yield staging
    finally:
        staging.discard()

"""Folders that a killed process leaves behind, found and removed by the next one.

A run's staging folder (`output`) and a session's upload folder (`studio.uploads`) are removed when
their process ends, but not when it is killed (SIGKILL, the out-of-memory killer, a power cut).
Their names carry the host and the id of the process that made them, so that a later process can
tell a folder whose maker is gone from one still in use: it sweeps only folders made on its own
host, by its own user, whose process no longer runs. Anything it cannot tell (another host, a
process id it may not signal, a symlink, another platform) it leaves alone.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
from pathlib import Path

_HOST_UNSAFE = re.compile(r"[^A-Za-z0-9.]")


def process_alive(pid: int) -> bool:
    """Whether process `pid` runs (one we may not signal does: it is another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        pass  # it exists, as another user's process; or an id beyond the system's, which we do not judge
    return True


def _host() -> str:
    return _HOST_UNSAFE.sub("_", socket.gethostname())[:64] or "host"


def owned_prefix(prefix: str) -> str:
    """`prefix` followed by this host and process, for a folder name (`tempfile.mkdtemp(prefix=)`)."""
    return f"{prefix}{_host()}-{os.getpid()}-"


def abandoned(folder: Path, prefix: str) -> list[Path]:
    """The folders in `folder` named by `owned_prefix(prefix)` whose process has ended, made by this
    user on this host; on a platform without POSIX process ids and owners, none."""
    if os.name != "posix":
        return []
    pattern = re.compile(re.escape(prefix + _host()) + r"-(\d{1,10})-")
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    found = []
    for entry in entries:
        match = pattern.match(entry.name)
        if match is None:
            continue
        try:
            mine = entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_uid == os.getuid()
        except OSError:
            continue
        if mine and int(match.group(1)) != os.getpid() and not process_alive(int(match.group(1))):
            found.append(Path(entry.path))
    return sorted(found)


def sweep(folder: Path, prefix: str) -> None:
    """Remove the abandoned folders of `prefix` in `folder`, as far as possible: a sweep never fails
    the process that makes it."""
    for abandoned_folder in abandoned(folder, prefix):
        shutil.rmtree(abandoned_folder, ignore_errors=True)

"""Where a sandbox worker keeps its state (the jails' root, /etc, the compile cache), which
also names its runs' cgroups (cgroups.state_key)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import tempfile
from pathlib import Path


def default_state_dir(instance: str = "") -> Path:
    """Root's own runtime folder rather than a guessable path in a world-writable /tmp;
    `instance` tells apart the workers of several servers on one host."""
    suffix = f"-{instance}" if instance else ""
    if os.geteuid() == 0:
        return Path(f"/run/backprop-sandbox{suffix}")
    return Path(tempfile.gettempdir()) / f"backprop-sandbox-{os.getuid()}{suffix}"


def state_dir_for(data_dir: Path) -> Path:
    """The state folder of the worker that serves the data in `data_dir`: one per data
    folder, so that two servers on one host never share one (the worker sweeps the run
    cgroups it finds keyed by its state folder at start, and would end the other's runs),
    while a restarted server finds what its previous life left."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:12]
    return default_state_dir(digest)


# A state folder's life with `backprop serve` (app/serve.py): the server notes in it which
# data folder it serves and holds a lock on it while it runs; a clean stop removes it (unless
# the operator keeps it for a fast restart), and every start removes the folders whose data
# folder is gone and that no running server holds. Each is about 20 MB (the jails' root, the
# compile cache); nothing else would ever remove them.

DATA_DIR_NOTE = "data-dir"  # the data folder the state serves, as an absolute path
LOCK = "serve.lock"  # held (flock) by the server while it runs


def claim(state: Path, data_dir: Path) -> int:
    """Note `data_dir` in the state folder and lock it for this process's life; the lock's
    file descriptor (closed by the process's end, whichever way it ends)."""
    state.mkdir(mode=0o700, parents=True, exist_ok=True)
    (state / DATA_DIR_NOTE).write_text(str(data_dir.resolve()))
    fd = os.open(state / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise SystemExit(
            f"Another `backprop serve` already serves the data folder {data_dir} "
            f"(it holds {state / LOCK}): stop it first, or give this one a DATA_DIR of its own."
        ) from None
    return fd


def in_use(state: Path) -> bool:
    """Whether a running server holds the folder's lock."""
    try:
        fd = os.open(state / LOCK, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken just now
    return False


def mounts_under(folder: Path, mountinfo: Path = Path("/proc/self/mountinfo")) -> list[str]:
    """The mount points at or under `folder`: a folder with one is never removed, since
    removing it would reach into what is mounted there."""
    root = str(folder.resolve())
    found = []
    for line in mountinfo.read_text().splitlines():
        point = line.split(" ")[4].encode().decode("unicode_escape")
        if point == root or point.startswith(root + "/"):
            found.append(point)
    return found


def remove(state: Path, mountinfo: Path = Path("/proc/self/mountinfo")) -> str | None:
    """Remove a state folder; why it was not, or None when it was (or was not there)."""
    if not state.exists():
        return None
    if state.is_symlink():
        return f"{state} is a symbolic link"
    mounted = mounts_under(state, mountinfo)
    if mounted:
        return f"something is still mounted in it ({', '.join(mounted)})"
    shutil.rmtree(state)
    return None


def orphans(parent: Path | None = None) -> list[tuple[Path, str]]:
    """State folders (beside this user's default one) whose data folder no longer exists
    and that no running server holds, with the data folder each served. Folders that name
    no data folder (made before servers noted it) are left alone: their owner is unknown."""
    base = default_state_dir()
    parent = parent or base.parent
    found = []
    for state in sorted(parent.glob(f"{base.name}-*")):
        note = state / DATA_DIR_NOTE
        if state.is_symlink() or not note.is_file():
            continue
        data_dir = note.read_text().strip()
        if data_dir and not Path(data_dir).exists() and not in_use(state):
            found.append((state, data_dir))
    return found

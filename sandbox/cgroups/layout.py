"""Where this host keeps its cgroups, read from /proc/self/mountinfo and /proc/self/cgroup:
cgroup v1 with one hierarchy per controller (/sys/fs/cgroup/memory, ...), v1 with controllers
mounted together (/sys/fs/cgroup/cpu,cpuacct, often with `cpu` and `cpuacct` symlinks beside
it), or the v2 unified hierarchy. Pure functions of those two texts, so that every layout can
be tested against a fake tree in a temporary folder."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path

# What every run needs. On v1, cpu and cpuacct are separate controllers (often co-mounted).
V1_REQUIRED = ("memory", "pids", "cpu", "cpuacct")
# Used when the host has them: freezer makes killing reliable, hugetlb keeps runs off the
# host's pool of huge pages.
V1_OPTIONAL = ("freezer", "hugetlb")
V2_REQUIRED = ("memory", "pids", "cpu")
V2_OPTIONAL = ("hugetlb",)


@dataclass(frozen=True)
class Layout:
    """The worker's own cgroup in each hierarchy the sandbox uses.

    v1: `dirs` maps each controller to the worker's cgroup folder in the hierarchy holding
    it; co-mounted controllers map to the same folder. v2: `unified` is the worker's cgroup
    folder in the unified hierarchy."""

    version: int
    dirs: dict[str, Path] = field(default_factory=dict)
    unified: Path | None = None


def _unescape(path: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040...)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), path)


@dataclass(frozen=True)
class _Mount:
    root: str  # the folder of the hierarchy mounted here (not '/' in some containers)
    point: Path
    fstype: str
    options: frozenset[str]


def _mounts(mountinfo: str) -> list[_Mount]:
    mounts = []
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        mounts.append(
            _Mount(
                root=_unescape(fields[3]),
                point=Path(_unescape(fields[4])),
                fstype=tail[0],
                options=frozenset(tail[2].split(",")),
            )
        )
    return mounts


def _memberships(proc_cgroup: str) -> dict[str, str]:
    """Controller (or '' for v2) -> this process's cgroup path in its hierarchy."""
    found: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, names, path = parts
        if not names:
            found[""] = path
        for name in names.split(","):
            if name:
                found[name] = path
    return found


def _inside(mount: _Mount, path: str) -> Path | None:
    """The folder of cgroup `path` under `mount`, or None when the mount does not show it."""
    root = mount.root.rstrip("/")
    if root and not (path == root or path.startswith(root + "/")):
        return None
    return mount.point / path[len(root) :].lstrip("/")


def detect(mountinfo: str, proc_cgroup: str) -> Layout | str:
    """The layout to use, or why there is none. v1 wins when it has every controller a run
    needs (a hybrid host also mounts an empty v2 hierarchy); else v2 when it is mounted."""
    mounts = _mounts(mountinfo)
    member = _memberships(proc_cgroup)
    dirs: dict[str, Path] = {}
    for mount in mounts:
        if mount.fstype != "cgroup":
            continue
        for controller in (*V1_REQUIRED, *V1_OPTIONAL):
            if controller in mount.options and controller in member and controller not in dirs:
                where = _inside(mount, member[controller])
                if where is not None:
                    dirs[controller] = where
    if all(c in dirs for c in V1_REQUIRED):
        return Layout(version=1, dirs=dirs)
    unified = next((m for m in mounts if m.fstype == "cgroup2"), None)
    if unified is not None and "" in member:
        where = _inside(unified, member[""])
        if where is not None and not dirs:
            return Layout(version=2, unified=where)
    if dirs:
        missing = ", ".join(c for c in V1_REQUIRED if c not in dirs)
        return f"cgroup v1 is mounted without the {missing} controller(s) a run needs"
    return "no cgroup hierarchy with the memory, pids and cpu controllers is mounted"


def current() -> Layout | str:
    """This host's layout, as this process sees it."""
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text()
        proc_cgroup = Path("/proc/self/cgroup").read_text()
    except OSError as exc:
        return f"cannot read this process's cgroups: {exc}"
    return detect(mountinfo, proc_cgroup)


def home_at_root(name: str) -> Path | None:
    """On a cgroup v2 host, a folder `name` directly under the hierarchy's root, with the
    controllers runs need handed to its children, for workers started from a shell (whose
    cgroup cannot hand controllers on: systemd delegates only to services; it also holds the
    shell). None on v1, where a worker can use the cgroup it starts in. OSError where this
    process may not write there (not root)."""
    layout = current()
    if isinstance(layout, str) or layout.version != 2 or layout.unified is None:
        return None
    root = layout.unified
    while (root.parent / "cgroup.controllers").exists():
        root = root.parent
    home = root / name
    home.mkdir(exist_ok=True)
    offered = (home / "cgroup.controllers").read_text().split()
    wanted = " ".join(f"+{c}" for c in V2_REQUIRED if c in offered)
    (home / "cgroup.subtree_control").write_text(wanted)
    return home


def remove_home(folder: Path) -> None:
    """Remove a folder that `home_at_root` gave a worker, and the empty cgroups under it
    (deepest first), once that worker has stopped. Best effort: one still in use stays."""
    for path in sorted(folder.rglob("*"), key=lambda p: -len(p.parts)):
        if path.is_dir():
            with contextlib.suppress(OSError):
                path.rmdir()
    with contextlib.suppress(OSError):
        folder.rmdir()

"""One cgroup per run: memory without swap, a pids cap and a CPU quota; and the readings the
verdict needs afterwards (out-of-memory kills, peak memory, CPU time). cgroup v1 (controllers
mounted apart or together) or v2, found from this process's own mounts (layout.py)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from sandbox.cgroups.base import PARENT, RUN_PREFIX, CgroupTree, RunCgroup
from sandbox.cgroups.layout import Layout, current, detect
from sandbox.cgroups.v1 import CgroupV1, TreeV1
from sandbox.cgroups.v2 import WORKER_LEAF, CgroupV2, TreeV2

__all__ = [
    "PARENT",
    "RUN_PREFIX",
    "CgroupTree",
    "CgroupV1",
    "CgroupV2",
    "Layout",
    "RunCgroup",
    "TreeV1",
    "TreeV2",
    "check",
    "detect",
    "enter",
    "state_key",
    "tree",
]


def state_key(state_dir: Path) -> str:
    """The name of a worker's folder among the runs' cgroups: its state folder, hashed, so
    that a restarted worker finds what its previous life left, and nobody else's."""
    return "w-" + hashlib.sha256(str(state_dir.resolve()).encode()).hexdigest()[:16]


def tree(key: str, layout: Layout | None = None) -> CgroupTree:
    """The cgroup folders of the worker `key`; OSError when this host has none to give."""
    found = current() if layout is None else layout
    if isinstance(found, str):
        raise OSError(found)
    return TreeV1(found, key) if found.version == 1 else TreeV2(found, key)


def enter(folder: Path) -> None:
    """Move this process into `folder` (made if missing): a cgroup v2 folder that the operator
    delegated to the worker, where systemd's Delegate=yes or a container does not."""
    # Straight into the leaf that TreeV2.prepare would move it to: a previous life may have
    # handed the folder's controllers to its children already, and then (the "no internal
    # processes" rule) no process may join the folder itself.
    leaf = folder / WORKER_LEAF
    leaf.mkdir(parents=True, exist_ok=True)
    (leaf / "cgroup.procs").write_text(str(os.getpid()))


def check(layout: Layout | None = None) -> str | None:
    """Why this host cannot give each run its cgroups, or None when it can."""
    try:
        probe = tree(f"probe-{os.getpid()}", layout)
        probe.prepare()
        probe.discard()
    except OSError as exc:
        return f"cannot create cgroups for runs: {exc.strerror or exc}"
    return None

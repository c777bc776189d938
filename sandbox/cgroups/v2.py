"""cgroup v2, the unified hierarchy: one folder per run under a subtree delegated to the
worker (systemd: `Delegate=yes`), with memory.max (no swap), pids.max, cpu.max and no huge
pages; read back through memory.events, memory.peak and cpu.stat; killed with cgroup.kill,
or frozen (cgroup.freeze), killed and thawed where the kernel predates cgroup.kill."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from sandbox.cgroups.base import (
    PARENT,
    CgroupTree,
    RunCgroup,
    read_pids,
    wait_until,
    write,
)
from sandbox.cgroups.layout import V2_OPTIONAL, V2_REQUIRED, Layout

CPU_PERIOD_US = 100_000
IDLE_WEIGHT = 1  # the least cpu.weight (100 is everyone's default)
NORMAL_WEIGHT = 100
WORKER_LEAF = "backprop-worker"  # where the worker moves itself (see TreeV2.prepare)


def _keyed(path: Path) -> dict[str, int]:
    """A flat-keyed file such as memory.events or cpu.stat."""
    pairs = (line.split() for line in path.read_text().splitlines())
    return {p[0]: int(p[1]) for p in pairs if len(p) == 2}


class CgroupV2(RunCgroup):
    def __init__(self, path: Path) -> None:
        self.path = path

    def folders(self) -> list[Path]:
        return [self.path]

    def procs_files(self) -> list[str]:
        return [str(self.path / "cgroup.procs")]

    def pids(self) -> list[int]:
        return read_pids(self.path / "cgroup.procs")

    def oom_killed(self) -> bool:
        return _keyed(self.path / "memory.events").get("oom_kill", 0) > 0

    def max_memory_mb(self) -> int:
        # memory.peak since Linux 5.19; OSError before, and the result says nothing.
        return int((self.path / "memory.peak").read_text()) // (1024 * 1024)

    def cpu_ms(self) -> int:
        return _keyed(self.path / "cpu.stat")["usage_usec"] // 1000

    def kill_at_once(self) -> bool:
        kill = self.path / "cgroup.kill"  # Linux 5.14: SIGKILL to every process, atomically
        if not kill.exists():
            return False
        try:
            write(kill, "1")
        except OSError:
            return False
        return True

    def _normal_weight(self) -> None:
        write(self.path / "cpu.weight", str(NORMAL_WEIGHT))

    def freeze(self, frozen: bool) -> bool:
        try:
            write(self.path / "cgroup.freeze", "1" if frozen else "0")
            if frozen:
                wait_until(lambda: _keyed(self.path / "cgroup.events").get("frozen") == 1)
        except OSError:
            return False
        return True


class TreeV2(CgroupTree):
    """`<own cgroup>/backprop-sandbox/<key>/run-*` in the unified hierarchy."""

    def __init__(self, layout: Layout, key: str) -> None:
        super().__init__(key)
        assert layout.unified is not None
        # The worker moves itself into WORKER_LEAF (prepare); its delegated cgroup, where the
        # runs' folders live, is then the leaf's parent, in every later look at the layout.
        own = layout.unified
        self.own = own.parent if own.name == WORKER_LEAF else own
        self.base = self.own / PARENT / key
        self.controllers: list[str] = list(V2_REQUIRED)

    def bases(self) -> list[Path]:
        return [self.base]

    def prepare(self) -> None:
        offered = set((self.own / "cgroup.controllers").read_text().split())
        missing = [c for c in V2_REQUIRED if c not in offered]
        if missing:
            raise OSError(
                f"cgroup v2: the controllers {', '.join(missing)} are not delegated to "
                f"{self.own} (run the worker in a cgroup of its own with them, e.g. a systemd "
                "service with Delegate=yes)"
            )
        self.controllers = [*V2_REQUIRED, *(c for c in V2_OPTIONAL if c in offered)]
        # Controllers go to children only from a cgroup without processes of its own (the
        # "no internal processes" rule): the worker moves itself into a leaf first.
        self._enable(self.own, move_self=True)
        for folder in (self.own / PARENT, self.base):
            folder.mkdir(exist_ok=True)
            self._enable(folder, move_self=False)

    def _enable(self, folder: Path, *, move_self: bool) -> None:
        control = folder / "cgroup.subtree_control"
        enabled = set(control.read_text().split())
        wanted = [c for c in self.controllers if c not in enabled]
        if not wanted:
            return
        procs = read_pids(folder / "cgroup.procs")
        if move_self and os.getpid() in procs:
            leaf = folder / WORKER_LEAF
            leaf.mkdir(exist_ok=True)
            write(leaf / "cgroup.procs", str(os.getpid()))
        try:
            write(control, " ".join(f"+{c}" for c in wanted))
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                raise
            raise OSError(
                f"cgroup v2: {folder} holds other processes, so it cannot hand controllers "
                "to the runs' cgroups; run the worker in a cgroup of its own"
            ) from None

    def open(self, name: str) -> CgroupV2:
        return CgroupV2(self.base / name)

    def make(
        self, name: str, *, memory_mb: int, pids: int, cpus: float, idle: bool = False
    ) -> CgroupV2:
        cgroup = self.open(name)
        path = cgroup.path
        path.mkdir()
        write(path / "memory.max", str(memory_mb * 1024 * 1024))
        if (path / "memory.swap.max").exists():
            write(path / "memory.swap.max", "0")  # the run can never swap
        if (path / "memory.oom.group").exists():
            write(path / "memory.oom.group", "1")  # an OOM kill takes the whole run
        write(path / "pids.max", str(pids))
        write(path / "cpu.max", f"{int(CPU_PERIOD_US * cpus)} {CPU_PERIOD_US}")
        if idle:
            write(path / "cpu.weight", str(IDLE_WEIGHT))
        if "hugetlb" in self.controllers:
            for limit_file in path.glob("hugetlb.*.max"):
                write(limit_file, "0")
        return cgroup

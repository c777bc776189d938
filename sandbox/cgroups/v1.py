"""cgroup v1: one folder per hierarchy (controllers mounted together share one), memory
without swap, a pids cap, a CPU quota, no huge pages, and the freezer when there is one."""

from __future__ import annotations

from pathlib import Path

from sandbox.cgroups.base import (
    PARENT,
    CgroupTree,
    RunCgroup,
    read_pids,
    wait_until,
    write,
)
from sandbox.cgroups.layout import Layout

CFS_PERIOD_US = 100_000
IDLE_SHARES = 2  # the least cpu.shares the kernel takes (1024 is everyone's default)
NORMAL_SHARES = 1024


def _unique(paths: dict[str, Path]) -> list[Path]:
    """Each folder once: cpu and cpuacct mounted together are one folder, not two."""
    seen: list[Path] = []
    for path in paths.values():
        if path not in seen:
            seen.append(path)
    return seen


class CgroupV1(RunCgroup):
    """A run's folder in every hierarchy it uses, by controller."""

    def __init__(self, dirs: dict[str, Path]) -> None:
        self.dirs = dirs

    def folders(self) -> list[Path]:
        return _unique(self.dirs)

    def procs_files(self) -> list[str]:
        return [str(path / "cgroup.procs") for path in self.folders()]

    def pids(self) -> list[int]:
        # The freezer's view when there is one: it is the hierarchy we freeze and kill in.
        return read_pids(self.dirs.get("freezer", self.dirs["pids"]) / "cgroup.procs")

    def oom_killed(self) -> bool:
        text = (self.dirs["memory"] / "memory.oom_control").read_text()
        fields = dict(line.split() for line in text.splitlines() if line.strip())
        if int(fields.get("oom_kill", "0")) > 0:
            return True
        # Older kernels have no oom_kill counter: hitting the limit is the best sign.
        failcnt = int((self.dirs["memory"] / "memory.failcnt").read_text())
        return "oom_kill" not in fields and failcnt > 0

    def max_memory_mb(self) -> int:
        peak = int((self.dirs["memory"] / "memory.max_usage_in_bytes").read_text())
        return peak // (1024 * 1024)

    def cpu_ms(self) -> int:
        return int((self.dirs["cpuacct"] / "cpuacct.usage").read_text()) // 1_000_000

    def _normal_weight(self) -> None:
        write(self.dirs["cpu"] / "cpu.shares", str(NORMAL_SHARES))

    def freeze(self, frozen: bool) -> bool:
        if "freezer" not in self.dirs:
            return False
        state = self.dirs["freezer"] / "freezer.state"
        try:
            write(state, "FROZEN" if frozen else "THAWED")
            if frozen:  # FREEZING until every task has stopped
                wait_until(lambda: state.read_text().strip() == "FROZEN")
        except OSError:
            return False
        return True


class TreeV1(CgroupTree):
    """`<own cgroup>/backprop-sandbox/<key>` in each hierarchy."""

    def __init__(self, layout: Layout, key: str) -> None:
        super().__init__(key)
        self.base = {c: path / PARENT / key for c, path in layout.dirs.items()}

    def bases(self) -> list[Path]:
        return _unique(self.base)

    def prepare(self) -> None:
        for path in self.bases():
            path.mkdir(parents=True, exist_ok=True)
        if not (self.base["memory"] / "memory.limit_in_bytes").exists():
            raise OSError("the memory controller has no memory.limit_in_bytes")

    def open(self, name: str) -> CgroupV1:
        return CgroupV1({c: base / name for c, base in self.base.items()})

    def make(
        self, name: str, *, memory_mb: int, pids: int, cpus: float, idle: bool = False
    ) -> CgroupV1:
        cgroup = self.open(name)
        for path in cgroup.folders():
            path.mkdir()
        dirs = cgroup.dirs
        limit = str(memory_mb * 1024 * 1024)
        memory = dirs["memory"]
        write(memory / "memory.limit_in_bytes", limit)
        if (memory / "memory.memsw.limit_in_bytes").exists():
            # memory+swap equal to memory: the run can never swap.
            write(memory / "memory.memsw.limit_in_bytes", limit)
        write(memory / "memory.swappiness", "0")
        write(dirs["pids"] / "pids.max", str(pids))
        write(dirs["cpu"] / "cpu.cfs_period_us", str(CFS_PERIOD_US))
        write(dirs["cpu"] / "cpu.cfs_quota_us", str(int(CFS_PERIOD_US * cpus)))
        if idle:
            write(dirs["cpu"] / "cpu.shares", str(IDLE_SHARES))
        if "hugetlb" in dirs:
            # Huge pages come from a host-wide pool that the memory limit does not count.
            for limit_file in dirs["hugetlb"].glob("hugetlb.*.limit_in_bytes"):
                write(limit_file, "0")
        return cgroup

"""One cgroup (v1) per run: memory without swap, a pids cap and a CPU quota; and the
readings the verdict needs afterwards (out-of-memory kills, peak memory, CPU time)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
PARENT = "backprop-sandbox"


def _own_path(controller: str) -> str:
    """This process's cgroup in `controller`, e.g. '/' or '/process_api/abc'."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path
    raise OSError(f"no cgroup v1 '{controller}' hierarchy")


def base_dirs() -> dict[str, Path]:
    """Where the runs' cgroups go: a child of this process's cgroup in each controller."""
    return {c: CGROUP_ROOT / c / _own_path(c).lstrip("/") / PARENT for c in CONTROLLERS}


def check() -> str | None:
    """Why this host cannot give each run its cgroups, or None when it can."""
    try:
        for controller, path in base_dirs().items():
            path.mkdir(exist_ok=True)
            probe = path / f"probe-{os.getpid()}"
            probe.mkdir(exist_ok=True)
            probe.rmdir()
            if controller == "memory" and not (path / "memory.limit_in_bytes").exists():
                return "the memory controller has no memory.limit_in_bytes"
    except OSError as exc:
        return f"cannot create cgroups (v1 memory, pids, cpu, cpuacct): {exc}"
    return None


@dataclass
class RunCgroup:
    """The cgroups of one run, in every controller."""

    dirs: dict[str, Path]

    @classmethod
    def create(cls, name: str, *, memory_mb: int, pids: int, cpus: float) -> RunCgroup:
        dirs = {c: base / name for c, base in base_dirs().items()}
        for path in dirs.values():
            path.mkdir()
        limit = str(memory_mb * 1024 * 1024)
        memory = dirs["memory"]
        (memory / "memory.limit_in_bytes").write_text(limit)
        if (memory / "memory.memsw.limit_in_bytes").exists():
            # memory+swap equal to memory: the run can never swap.
            (memory / "memory.memsw.limit_in_bytes").write_text(limit)
        (memory / "memory.swappiness").write_text("0")
        (dirs["pids"] / "pids.max").write_text(str(pids))
        period = 100_000
        (dirs["cpu"] / "cpu.cfs_period_us").write_text(str(period))
        (dirs["cpu"] / "cpu.cfs_quota_us").write_text(str(int(period * cpus)))
        return cls(dirs)

    def procs_files(self) -> list[str]:
        """The files a process writes its pid into to join every controller."""
        return [str(path / "cgroup.procs") for path in self.dirs.values()]

    def pids(self) -> list[int]:
        text = (self.dirs["pids"] / "cgroup.procs").read_text()
        return [int(p) for p in text.split()]

    def kill_all(self, timeout_seconds: float = 5.0) -> None:
        """SIGKILL every process of the run until none is left."""
        deadline = time.monotonic() + timeout_seconds
        while True:
            try:
                pids = self.pids()
            except OSError:
                return
            if not pids or time.monotonic() > deadline:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

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

    def remove(self) -> None:
        """Kill what is left and delete the cgroups."""
        self.kill_all()
        for path in self.dirs.values():
            for _ in range(100):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)  # the last process is still being torn down

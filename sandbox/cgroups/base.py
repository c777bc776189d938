"""What the sandbox asks of a cgroup, whichever version the host has: one run's cgroup
(limits, readings, killing everything in it, removing it) and the folder that holds one
worker's runs. cgroup v1 and v2 each implement it (v1.py, v2.py)."""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("sandbox")

PARENT = "backprop-sandbox"  # beside the worker's own cgroup: <own>/backprop-sandbox/<key>/run-*
RUN_PREFIX = "run-"
FREEZE_WAIT_SECONDS = 1.0


def wait_until(frozen: Callable[[], bool]) -> None:
    """Poll until `frozen()` holds, FREEZE_WAIT_SECONDS at most: a freeze takes effect task by
    task, and a run that is slow to stop is killed anyway (killing needs no freeze)."""
    deadline = time.monotonic() + FREEZE_WAIT_SECONDS
    while not frozen() and time.monotonic() <= deadline:
        time.sleep(0.001)


def read_pids(procs: Path) -> list[int]:
    return [int(p) for p in procs.read_text().split()]


def write(path: Path, value: str) -> None:
    path.write_text(value)


class RunCgroup(ABC):
    """The cgroup(s) of one run."""

    @abstractmethod
    def folders(self) -> list[Path]:
        """Every folder of this run's cgroup, one per hierarchy."""

    @abstractmethod
    def procs_files(self) -> list[str]:
        """The files a process writes its pid into to join the run's cgroup everywhere."""

    @abstractmethod
    def pids(self) -> list[int]:
        """Every process in the run's cgroup. OSError once the cgroup is gone."""

    @abstractmethod
    def oom_killed(self) -> bool:
        """Whether the memory controller killed a process of the run."""

    @abstractmethod
    def max_memory_mb(self) -> int: ...

    @abstractmethod
    def cpu_ms(self) -> int:
        """CPU time of every process of the run, alive or gone."""

    def hurry(self) -> None:
        """An idle cgroup (a trusted warming run) that someone now waits for: give it the
        CPU weight every run has, and its processes the nice level of every run's (they
        took the idlest, jail.py). Called again as it starts processes: new ones inherit
        the nice level of their parent. OSError when the cgroup is gone."""
        self._normal_weight()
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.setpriority(os.PRIO_PROCESS, pid, 0)

    @abstractmethod
    def _normal_weight(self) -> None: ...

    def freeze(self, frozen: bool) -> bool:
        """Freeze (or thaw) every process; False when this cgroup has no freezer."""
        return False

    def kill_at_once(self) -> bool:
        """Kill every process in one step (v2's cgroup.kill); False when it cannot."""
        return False

    def rmdir(self, path: Path) -> None:
        path.rmdir()  # a cgroup folder goes with rmdir, its interface files with it

    def kill_all(self, timeout_seconds: float = 5.0) -> list[int]:
        """Kill every process of the run; the pids still there at the deadline (logged as
        an error), or [] when none is left.

        Frozen first: a frozen process can neither fork a new one past us nor exit and have
        its pid reused by some host process before our SIGKILL reaches it."""
        deadline = time.monotonic() + timeout_seconds
        while True:
            try:
                pids = self.pids()
            except OSError:
                return []  # the cgroup is gone, and everything in it
            if not pids:
                return []
            if time.monotonic() > deadline:
                log.error("processes %s are still alive in %s", pids, self.folders()[0])
                return pids
            if not self.kill_at_once():
                frozen = self.freeze(True)
                try:
                    for pid in self.pids():
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                finally:
                    if frozen:
                        self.freeze(False)  # frozen processes die of the SIGKILL once thawed
            time.sleep(0.005)

    def remove(self, timeout_seconds: float = 5.0) -> bool:
        """Kill what is left and delete the cgroup; False (logged) when it could not."""
        removed = not self.kill_all(timeout_seconds)
        deadline = time.monotonic() + timeout_seconds
        for path in self.folders():
            while True:
                try:
                    self.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if time.monotonic() > deadline:
                        log.error("cannot remove the run cgroup %s: %s", path, exc)
                        removed = False
                        break
                    time.sleep(0.005)  # the last process is still being torn down
        return removed


class CgroupTree(ABC):
    """Where one worker keeps its runs' cgroups: `<own cgroup>/backprop-sandbox/<key>/`,
    `key` naming the worker's state folder, so a worker sweeps only what a previous life of
    itself left, never the runs of another worker on the same host."""

    def __init__(self, key: str) -> None:
        self.key = key

    @abstractmethod
    def bases(self) -> list[Path]:
        """The folders (one per hierarchy) that hold this worker's run cgroups."""

    @abstractmethod
    def prepare(self) -> None:
        """Make the folders; OSError (with words for the status) when this host cannot."""

    @abstractmethod
    def make(
        self, name: str, *, memory_mb: int, pids: int, cpus: float, idle: bool = False
    ) -> RunCgroup:
        """Create the cgroup `name` with these limits (the folders exist once this returns,
        even when it raises: `create` removes them then). `idle`: the least CPU weight, so
        that the run gets CPU only when nothing beside it wants it (warming the compile
        cache, which must not slow the pages or the learners' runs)."""

    @abstractmethod
    def open(self, name: str) -> RunCgroup:
        """The run cgroup `name` as it stands (its folders may or may not exist)."""

    def create(self, *, memory_mb: int, pids: int, cpus: float, idle: bool = False) -> RunCgroup:
        """A new run cgroup with a random name: nothing the code can see (its cgroup path)
        tells it the run's id. Nothing is left behind when this fails."""
        name = f"{RUN_PREFIX}{secrets.token_hex(8)}"
        try:
            return self.make(name, memory_mb=memory_mb, pids=pids, cpus=cpus, idle=idle)
        except BaseException:
            self.open(name).remove(timeout_seconds=1.0)
            raise

    def leftovers(self) -> list[RunCgroup]:
        """Run cgroups found in this worker's folders."""
        names: set[str] = set()
        for base in self.bases():
            with contextlib.suppress(OSError):
                names |= {p.name for p in base.iterdir() if p.name.startswith(RUN_PREFIX)}
        return [self.open(name) for name in sorted(names)]

    def sweep(self) -> list[str]:
        """Kill and remove every run cgroup left here (by a previous life of the worker);
        what could not be cleaned, in words (also logged)."""
        problems = []
        for cgroup in self.leftovers():
            log.warning("removing a leftover run cgroup: %s", cgroup.folders()[0])
            if not cgroup.remove():
                problems.append(f"could not clean up {cgroup.folders()[0]}")
        return problems

    def discard(self) -> None:
        """Remove this worker's (empty) folders, once it has no run left."""
        for base in self.bases():
            with contextlib.suppress(OSError):
                base.rmdir()

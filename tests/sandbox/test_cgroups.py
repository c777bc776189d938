"""The cgroup layer against the layouts hosts really use. This host has cgroup v1 (one folder
per controller), so the other layouts are fake trees in a temporary folder, their files plain
files: what the code writes is checked, and what the kernel would write is written by the
test. A last test kills real processes in a real cgroup of this host."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox import cgroups
from sandbox.cgroups import CgroupV1, CgroupV2, Layout, TreeV1, TreeV2, detect
from tests.support.sandbox_worker import needs_isolation, worker_tree

KEY = "w-test"
CGROUP_V1 = """12:pids:/
11:memory:/svc
10:cpu,cpuacct:/
9:freezer:/
1:name=systemd:/init.scope
0::/init.scope
"""


def mountinfo(root: Path, *mounts: tuple[str, str, str]) -> str:
    """Lines of /proc/self/mountinfo for (mount point under root, fs type, super options)."""
    lines = ["22 1 0:21 / /proc rw,relatime - proc proc rw"]
    for n, (point, fstype, options) in enumerate(mounts):
        lines.append(f"{30 + n} 29 0:{40 + n} / {root / point} rw,relatime - {fstype} cg {options}")
    return "\n".join(lines) + "\n"


def v1_separate(root: Path) -> str:
    return mountinfo(
        root,
        ("cpu", "cgroup", "rw,cpu"),
        ("cpuacct", "cgroup", "rw,cpuacct"),
        ("memory", "cgroup", "rw,memory"),
        ("pids", "cgroup", "rw,pids"),
        ("freezer", "cgroup", "rw,freezer"),
        ("systemd", "cgroup", "rw,xattr,name=systemd"),
        ("unified", "cgroup2", "rw,nsdelegate"),
    )


def test_v1_with_a_hierarchy_per_controller(tmp_path: Path) -> None:
    layout = detect(
        v1_separate(tmp_path), CGROUP_V1.replace("10:cpu,cpuacct:/", "10:cpu:/\n3:cpuacct:/")
    )
    assert isinstance(layout, Layout) and layout.version == 1
    assert layout.dirs == {
        "cpu": tmp_path / "cpu",
        "cpuacct": tmp_path / "cpuacct",
        "memory": tmp_path / "memory/svc",
        "pids": tmp_path / "pids",
        "freezer": tmp_path / "freezer",
    }


def test_v1_with_cpu_and_cpuacct_mounted_together(tmp_path: Path) -> None:
    # /sys/fs/cgroup/cpu,cpuacct, with `cpu` and `cpuacct` symlinks beside it (systemd).
    info = mountinfo(
        tmp_path,
        ("cpu,cpuacct", "cgroup", "rw,cpu,cpuacct"),
        ("memory", "cgroup", "rw,memory"),
        ("pids", "cgroup", "rw,pids"),
    )
    (tmp_path / "cpu,cpuacct").mkdir()
    (tmp_path / "cpu").symlink_to("cpu,cpuacct")
    (tmp_path / "cpuacct").symlink_to("cpu,cpuacct")
    layout = detect(info, CGROUP_V1)
    assert isinstance(layout, Layout) and layout.version == 1
    assert layout.dirs["cpu"] == layout.dirs["cpuacct"] == tmp_path / "cpu,cpuacct"
    assert "freezer" not in layout.dirs  # not mounted here: killing goes without it

    for folder in ("memory/svc", "pids"):
        (tmp_path / folder).mkdir(parents=True)
    tree = TreeV1(layout, KEY)
    for base in tree.bases():
        base.mkdir(parents=True)
    (tree.base["memory"] / "memory.limit_in_bytes").write_text("max")  # the kernel's file
    tree.prepare()
    cgroup = tree.make("run-1", memory_mb=300, pids=64, cpus=1.5)
    # One folder for cpu and cpuacct together, joined once.
    assert len(cgroup.folders()) == 3
    assert len(cgroup.procs_files()) == 3
    shared = tmp_path / "cpu,cpuacct" / cgroups.PARENT / KEY / "run-1"
    assert (shared / "cpu.cfs_quota_us").read_text() == "150000"
    assert not (shared / "cpu.shares").exists()  # the kernel's default, as for anyone
    memory = tmp_path / "memory/svc" / cgroups.PARENT / KEY / "run-1"
    assert (memory / "memory.limit_in_bytes").read_text() == str(300 << 20)
    assert [c.folders()[0].name for c in tree.leftovers()] == ["run-1"]
    idle = tree.make("run-2", memory_mb=300, pids=64, cpus=1.5, idle=True)
    assert (idle.dirs["cpu"] / "cpu.shares").read_text() == "2"  # the least there is


def test_v1_in_a_container_whose_hierarchy_is_mounted_from_a_subfolder(tmp_path: Path) -> None:
    # Docker without a cgroup namespace: mount root /docker/abc, and /proc/self/cgroup says so.
    info = "\n".join(
        f"{30 + n} 29 0:{40 + n} /docker/abc {tmp_path / c} rw - cgroup cgroup rw,{c}"
        for n, c in enumerate(("cpu", "cpuacct", "memory", "pids"))
    )
    proc = "\n".join(
        f"{n}:{c}:/docker/abc" for n, c in enumerate(("cpu", "cpuacct", "memory", "pids"))
    )
    layout = detect(info, proc)
    assert isinstance(layout, Layout)
    assert layout.dirs["memory"] == tmp_path / "memory"


def test_v1_without_a_controller_says_which(tmp_path: Path) -> None:
    info = mountinfo(tmp_path, ("memory", "cgroup", "rw,memory"), ("cpu", "cgroup", "rw,cpu"))
    problem = detect(info, CGROUP_V1)
    assert isinstance(problem, str) and "pids" in problem and "cpuacct" in problem


def test_nothing_mounted_is_refused_in_words(tmp_path: Path) -> None:
    problem = detect(mountinfo(tmp_path), "")
    assert isinstance(problem, str) and "no cgroup hierarchy" in problem


def v2_tree(tmp_path: Path) -> tuple[Path, TreeV2]:
    """A delegated v2 subtree: the worker's cgroup /svc with every controller offered."""
    info = mountinfo(tmp_path, ("", "cgroup2", "rw,nsdelegate"))
    layout = detect(info, "0::/svc\n")
    assert isinstance(layout, Layout) and layout.version == 2
    own = tmp_path / "svc"
    assert layout.unified == own
    own.mkdir()
    (own / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids\n")
    (own / "cgroup.subtree_control").write_text("\n")
    (own / "cgroup.procs").write_text(f"{os.getpid()}\n")
    for folder in (own / cgroups.PARENT, own / cgroups.PARENT / KEY):
        folder.mkdir()
        (folder / "cgroup.subtree_control").write_text("")
        (folder / "cgroup.procs").write_text("")
    return own, TreeV2(layout, KEY)


def test_v2_the_worker_in_its_leaf_still_uses_its_delegated_cgroup(tmp_path: Path) -> None:
    """After prepare() the worker's /proc/self/cgroup names the leaf; the runs' folders stay
    beside it, so a second look at the layout (the isolation check, then the worker's own
    tree; or a restarted worker) finds the same ones."""
    own, first = v2_tree(tmp_path)
    first.prepare()
    info = mountinfo(tmp_path, ("", "cgroup2", "rw,nsdelegate"))
    again = detect(info, "0::/svc/backprop-worker\n")
    assert isinstance(again, Layout) and again.unified == own / "backprop-worker"
    assert TreeV2(again, KEY).bases() == first.bases() == [own / cgroups.PARENT / KEY]


def test_entering_a_delegated_cgroup_joins_its_leaf(tmp_path: Path) -> None:
    """`--cgroup`: a previous life may have handed the folder's controllers on already, and
    then only its leaf may take a process."""
    folder = tmp_path / "backprop"
    cgroups.enter(folder)
    assert (folder / "backprop-worker" / "cgroup.procs").read_text() == str(os.getpid())


class FakeV2(CgroupV2):
    def rmdir(self, path: Path) -> None:  # a fake folder holds plain files
        for file in path.iterdir():
            file.unlink()
        path.rmdir()


def test_v2_delegates_the_controllers_and_sets_every_limit(tmp_path: Path) -> None:
    own, tree = v2_tree(tmp_path)
    tree.prepare()
    # The worker moved itself into a leaf: a cgroup with processes cannot hand controllers on.
    assert (own / "backprop-worker" / "cgroup.procs").read_text() == str(os.getpid())
    for folder in (own, own / cgroups.PARENT, own / cgroups.PARENT / KEY):
        assert (folder / "cgroup.subtree_control").read_text() == "+memory +pids +cpu +hugetlb"
    cgroup = tree.make("run-1", memory_mb=512, pids=32, cpus=2)
    run = own / cgroups.PARENT / KEY / "run-1"
    assert (run / "memory.max").read_text() == str(512 << 20)
    assert (run / "pids.max").read_text() == "32"
    assert (run / "cpu.max").read_text() == "200000 100000"
    assert cgroup.procs_files() == [str(run / "cgroup.procs")]
    assert not (run / "cpu.weight").exists()  # the kernel's default weight, as for anyone


def test_v2_gives_an_idle_run_the_least_cpu_weight(tmp_path: Path) -> None:
    own, tree = v2_tree(tmp_path)
    tree.prepare()
    tree.make("run-1", memory_mb=512, pids=32, cpus=2, idle=True)
    assert (own / cgroups.PARENT / KEY / "run-1" / "cpu.weight").read_text() == "1"


def test_v2_reads_back_out_of_memory_kills_peak_memory_and_cpu_time(tmp_path: Path) -> None:
    _, tree = v2_tree(tmp_path)
    cgroup = tree.make("run-2", memory_mb=256, pids=16, cpus=1)
    path = cgroup.path
    (path / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    (path / "memory.peak").write_text(str(300 << 20))
    (path / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n")
    assert cgroup.oom_killed() and cgroup.max_memory_mb() == 300 and cgroup.cpu_ms() == 1500
    (path / "memory.events").write_text("oom 0\noom_kill 0\n")
    assert not cgroup.oom_killed()


def test_v2_refuses_when_the_controllers_are_not_delegated(tmp_path: Path) -> None:
    own, tree = v2_tree(tmp_path)
    (own / "cgroup.controllers").write_text("cpu io\n")
    with pytest.raises(OSError, match="memory, pids are not delegated"):
        tree.prepare()


def test_v2_kills_with_cgroup_kill_or_by_freezing(tmp_path: Path) -> None:
    _, tree = v2_tree(tmp_path)
    made = tree.make("run-3", memory_mb=256, pids=16, cpus=1)
    cgroup = FakeV2(made.path)
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        # Before Linux 5.14 there is no cgroup.kill: freeze, kill every process, thaw.
        (cgroup.path / "cgroup.procs").write_text(f"{sleeper.pid}\n")
        (cgroup.path / "cgroup.events").write_text("populated 1\nfrozen 1\n")
        assert cgroup.kill_all(timeout_seconds=0.2) == [sleeper.pid]  # the fake file stays
        assert sleeper.wait(timeout=5) == -signal.SIGKILL
        assert (cgroup.path / "cgroup.freeze").read_text() == "0"  # thawed again
        # With cgroup.kill, one write does it.
        (cgroup.path / "cgroup.kill").write_text("")
        (cgroup.path / "cgroup.procs").write_text("")
        assert cgroup.remove()
        assert not cgroup.path.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_cgroup_that_cannot_be_made_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = Layout(version=1, dirs={c: tmp_path / c for c in ("memory", "pids", "cpu", "cpuacct")})
    tree = TreeV1(layout, KEY)
    for base in tree.bases():
        base.mkdir(parents=True)
    (tree.base["memory"] / "memory.limit_in_bytes").write_text("max")
    tree.prepare()

    def write(path: Path, value: str) -> None:
        if path.name == "pids.max":
            raise OSError(28, "No space left on device")
        path.write_text(value)

    monkeypatch.setattr("sandbox.cgroups.v1.write", write)
    monkeypatch.setattr(CgroupV1, "rmdir", lambda self, path: shutil.rmtree(path))
    with pytest.raises(OSError, match="No space"):
        tree.create(memory_mb=256, pids=16, cpus=1)
    assert tree.leftovers() == []
    assert all(
        list(base.iterdir()) in ([], [base / "memory.limit_in_bytes"]) for base in tree.bases()
    )


@needs_isolation
def test_killing_a_real_run_cgroup_freezes_kills_and_thaws(tmp_path: Path) -> None:
    tree = worker_tree(tmp_path)
    tree.prepare()
    cgroup = tree.create(memory_mb=256, pids=64, cpus=1)
    assert isinstance(cgroup, CgroupV1 | CgroupV2)
    # A process that keeps forking: only a frozen cgroup holds it still long enough.
    script = (
        "import os, time\nwhile True:\n    os.fork() == 0 and time.sleep(60)\n    time.sleep(0.01)"
    )
    joins = "; ".join(f"echo $$ > {f}" for f in cgroup.procs_files())
    parent = subprocess.Popen(["sh", "-c", f'{joins}; exec "$0" -c "$1"', sys.executable, script])
    try:
        deadline = time.monotonic() + 10
        while len(cgroup.pids()) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(cgroup.pids()) >= 5
        assert cgroup.kill_all() == []
        assert cgroup.pids() == []
        assert cgroup.remove()
        assert all(not folder.exists() for folder in cgroup.folders())
    finally:
        parent.kill()
        parent.wait()
        tree.sweep()
        tree.discard()

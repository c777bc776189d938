"""The compile cache runs start from: what the trusted step compiles, how the folder is
sealed, and (with a real worker) that a run tampering with its cache changes nothing that a
later run loads, and that warming runs at idle priority."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session, select

from app.domain import Requirement
from app.labs.labs import parse_results
from app.models import CodeSample, Item
from sandbox.cgroups import CgroupTree
from sandbox.compile_cache import CANNOT_RUN_AS_PRINTED, lab_programs, seal, warm_programs
from tests.support.paths import CONTENT_DIR
from tests.support.sandbox_worker import needs_isolation, running_worker, worker_tree

# A lab small enough to compile in a few seconds: the harness, one fused elementwise chain.
TINY_LAB = """\
---
title: tiny
---

```python
import torch
from backprop_lab import compare

compare(lambda x: (x.sin() * 2 + 1).relu(), torch.randn(64, 64), label="tiny", rounds=2,
        min_run_time=0.01)
```
"""

# Rewrites every file of its cache: Python modules raise on import, everything else is
# emptied; then reports how many files it changed and whether it can see the host's folder.
TAMPER = """\
import os
changed = 0
for folder, _, files in os.walk("/tmp/.compile-cache"):
    for name in files:
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            if name.endswith(".py"):
                f.write("raise SystemExit('TAMPERED')\\n")
        changed += 1
print("changed", changed)
print("mounts", open("/proc/self/mountinfo").read())
"""


# A "lab" that records, in its cache folder (writable while warming), the nice level it runs
# at, and stays a moment so that the test can read its cgroup's CPU weight from the host.
IDLE_LAB = """\
---
title: idle
---

```python
import os, time
with open("/tmp/.compile-cache/nice", "w") as f:
    f.write(str(os.getpriority(os.PRIO_PROCESS, 0)))
time.sleep(5)
```
"""
NICE_OF_A_RUN = "import os, time\nprint(os.getpriority(os.PRIO_PROCESS, 0))\ntime.sleep(5)\n"


def _cpu_weights(tree: CgroupTree) -> set[str]:
    """The CPU weight of each run cgroup there now: cpu.shares (v1) or cpu.weight (v2)."""
    found = set()
    for cgroup in tree.leftovers():
        for folder in cgroup.folders():
            for name in ("cpu.shares", "cpu.weight"):
                with contextlib.suppress(OSError):
                    found.add((folder / name).read_text().strip())
    return found


def _result_line(result: dict[str, Any]) -> dict[str, Any]:
    out = "".join(event.get("data", "") for event in result["events"])
    assert "TAMPERED" not in out, out
    (line,) = parse_results(out)  # as the site reads it (app/labs/labs.py)
    return line


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in folder.rglob("*")
        if path.is_file()
    }


def test_the_trusted_step_compiles_exactly_the_labs_samples(engine: Engine) -> None:
    programs = lab_programs(CONTENT_DIR / "labs")
    with Session(engine) as session:
        stored = session.exec(
            select(CodeSample.code)
            .join(Item)
            .where(Item.deck_slug == "labs")
            .order_by(Item.number, CodeSample.index)
        ).all()
    assert [p.code for p in programs] == list(stored)
    assert len(programs) == 10


def test_a_lab_that_needs_a_gpu_or_the_network_is_warmed_where_it_can_run(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "```python requires=cuda\nprint(1)\n```\n\n```python requires=network\nprint(2)\n```\n"
        "```text\nnot code\n```\n"
    )
    (programs,) = lab_programs(tmp_path)
    assert programs.code == "print(1)"
    assert not programs.runs_on("cpu") and programs.runs_on("cuda")


def test_after_the_labs_every_sample_that_compiles_and_runs_as_printed_is_warmed(
    engine: Engine,
) -> None:
    programs = warm_programs(CONTENT_DIR / "labs")
    assert programs[:10] == lab_programs(CONTENT_DIR / "labs")  # the labs first
    with Session(engine) as session:
        stored = session.exec(
            select(CodeSample.code).join(Item).where(Item.deck_slug != "labs")
        ).all()
    others = [p.code for p in programs[10:]]
    assert others and set(others) <= set(stored)  # each as the site stores it
    assert all("torch.compile" in code for code in others)
    # The seed's own ResNet-50 step (cuda, incomplete, long) is not; its CPU variant is.
    names = [p.name for p in programs]
    assert "torch-compile/05-compiled-resnet50-training-step.md#1" in names
    assert "torch-compile/05-compiled-resnet50-training-step.md#0" not in names


def test_samples_that_cannot_run_as_printed_or_do_not_compile_are_not_warmed(
    tmp_path: Path,
) -> None:
    (tmp_path / "decks.yml").write_text("decks: []\n")
    (tmp_path / "labs").mkdir()
    (tmp_path / "labs" / "a.md").write_text("```python\nimport torch\n```\n")
    (tmp_path / "deck").mkdir()
    compiles = "f = torch.compile(g)"
    (tmp_path / "deck" / "b.md").write_text(
        "".join(
            f"```python{flags}\n{code}\n```\n\n"
            for flags, code in [
                ("", "print('no compile')"),
                (" requires=incomplete", compiles),
                (" requires=cuda,long", compiles),
                (" requires=broken", compiles),
                (" requires=network", compiles),
                (" requires=cuda", compiles + "  # on a GPU"),
                ("", compiles),
            ]
        )
    )
    programs = warm_programs(tmp_path / "labs")
    assert [(p.name, p.code) for p in programs] == [
        ("a.md#0", "import torch"),
        ("deck/b.md#5", compiles + "  # on a GPU"),
        ("deck/b.md#6", compiles),
    ]
    # Outside a content folder (no decks.yml beside it), the labs alone.
    (tmp_path / "decks.yml").unlink()
    assert [p.name for p in warm_programs(tmp_path / "labs")] == ["a.md#0"]


def test_sealing_makes_the_folder_roots_and_follows_no_link(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    (folder / "inductor" / "ab").mkdir(parents=True)
    module = folder / "inductor" / "ab" / "graph.py"
    module.write_text("x = 1\n")
    module.chmod(0o640)
    outside = tmp_path / "outside"
    outside.write_text("secret")
    outside.chmod(0o600)
    (folder / "link").symlink_to(outside)
    if os.geteuid() == 0:
        os.chown(module, 61000, 61000)
    seal(folder)
    assert module.stat().st_mode & 0o777 == 0o666
    assert (folder / "inductor").stat().st_mode & 0o777 == 0o777
    assert outside.stat().st_mode & 0o777 == 0o600, "a link's target is left alone"
    if os.geteuid() == 0:
        assert module.stat().st_uid == 0


@needs_isolation
def test_a_run_that_tampers_with_the_cache_affects_no_later_run(tmp_path: Path) -> None:
    labs = tmp_path / "labs"
    labs.mkdir()
    (labs / "01-tiny.md").write_text(TINY_LAB)
    (code,) = [p.code for p in lab_programs(labs)]
    with running_worker(tmp_path / "worker", "--warm-labs", str(labs)) as worker:
        deadline = time.monotonic() + 240
        while not worker.status()["compile_cache"]["cpu"].startswith("ready"):
            assert time.monotonic() < deadline, worker.status()
            time.sleep(0.5)
        assert worker.status()["compile_cache"]["cpu"] == "ready: 1 of 1 samples compiled"

        first = _result_line(worker.run(code))
        assert first["receipt"]["compile_cache"] == "warm", first["receipt"]

        assert worker.state_dir is not None
        sealed = worker.state_dir / "compile-cache" / "cpu"
        before = _digests(sealed)
        tamper = worker.run(TAMPER)
        out = "".join(event.get("data", "") for event in tamper["events"])
        assert tamper["verdict"] == "ok", out
        changed = int(re.search(r"changed (\d+)", out).group(1))  # type: ignore[union-attr]
        assert changed > 0, "the run saw the cache and rewrote it (in its own layer)"
        assert str(tmp_path) not in out, "the cache's host folder is not named to the run"

        assert _digests(sealed) == before, "the sealed folder is unchanged, byte for byte"
        after = _result_line(worker.run(code))
        assert after["receipt"]["compile_cache"] == "warm", after["receipt"]
        assert after["correct"] is True


@needs_isolation
def test_warming_runs_at_idle_priority_and_runs_at_normal(tmp_path: Path) -> None:
    labs = tmp_path / "labs"
    labs.mkdir()
    (labs / "01-idle.md").write_text(IDLE_LAB)
    with running_worker(tmp_path / "worker", "--warm-labs", str(labs)) as worker:
        assert worker.state_dir is not None
        tree = worker_tree(worker.state_dir)
        weights: set[str] = set()
        deadline = time.monotonic() + 120
        while not worker.status()["compile_cache"]["cpu"].startswith("ready"):
            weights |= _cpu_weights(tree)
            assert time.monotonic() < deadline, worker.status()
            time.sleep(0.1)
        assert weights in ({"2"}, {"1"}), weights  # the least: v1's cpu.shares, v2's weight
        sealed = worker.state_dir / "compile-cache" / "cpu"
        assert (sealed / "nice").read_text() == "19"

        results: list[dict[str, Any]] = []
        run = threading.Thread(target=lambda: results.append(worker.run(NICE_OF_A_RUN)))
        run.start()
        weights = set()
        while run.is_alive():
            weights |= _cpu_weights(tree)
            time.sleep(0.1)
        run.join()
        out = "".join(event.get("data", "") for event in results[0]["events"])
        assert results[0]["verdict"] == "ok" and out == "0\n"
        assert weights in ({"1024"}, {"100"}), weights  # everyone's default


def test_the_flags_that_keep_a_sample_from_warming_are_the_contents_own() -> None:
    # The sandbox imports nothing of the app, so it names them itself: a flag renamed or
    # dropped in the content's vocabulary must not leave a stale name here.
    assert {r.value for r in Requirement} >= CANNOT_RUN_AS_PRINTED
    assert "cuda" not in CANNOT_RUN_AS_PRINTED  # a GPU sample runs where there is one


# Three "labs" for the hand-off: the first takes a while and records its nice level at its
# start and at its end; the other two leave a mark in the cache they warm. Run by a learner
# (not warming), the third reports what its cache holds.
HAND_OFF_LAB = """\
---
title: hand-off
---

```python
import os, time
with open("/tmp/.compile-cache/a-nice-start", "w") as f:
    f.write(str(os.getpriority(os.PRIO_PROCESS, 0)))
time.sleep(4)
with open("/tmp/.compile-cache/a-nice-end", "w") as f:
    f.write(str(os.getpriority(os.PRIO_PROCESS, 0)))
```

```python
import os
if os.environ.get("BACKPROP_LAB_WARM") == "1":
    open("/tmp/.compile-cache/c-mark", "w").write("warmed")
```

```python
import os
def read(name):
    path = "/tmp/.compile-cache/" + name
    return open(path).read() if os.path.exists(path) else "none"
if os.environ.get("BACKPROP_LAB_WARM") == "1":
    open("/tmp/.compile-cache/b-mark", "w").write("warmed")
print("b", read("b-mark"), "c", read("c-mark"), "a-end", read("a-nice-end"))
```
"""


@needs_isolation
def test_a_run_of_a_program_being_warmed_waits_for_the_warmer_and_hurries_it(
    tmp_path: Path,
) -> None:
    labs = tmp_path / "labs"
    labs.mkdir()
    (labs / "01-hand-off.md").write_text(HAND_OFF_LAB)
    slow, _, wanted = [p.code for p in lab_programs(labs)]
    with running_worker(tmp_path / "worker", "--warm-labs", str(labs)) as worker:
        deadline = time.monotonic() + 120
        while worker.status()["compile_cache"]["cpu"] != "warming: 0 of 3 samples compiled":
            assert time.monotonic() < deadline, worker.status()
            time.sleep(0.05)
        result = worker.run(wanted + "\n")  # as a page sends it: blank lines do not matter
        assert result["verdict"] == "ok", result
        kinds = [e["type"] for e in result["events"]]
        assert kinds[:3] == ["phase", "phase", "started"], kinds
        assert [e["phase"] for e in result["events"][:2]] == ["warming", "running"]
        # The warmer took the wanted program before the other one, and the run loaded what
        # it compiled; the slow one, waited on, finished at an ordinary run's nice level.
        assert result["stdout"] == "b warmed c none a-end 0\n"
        while not worker.status()["compile_cache"]["cpu"].startswith("ready"):
            assert time.monotonic() < deadline, worker.status()
            time.sleep(0.1)
        assert worker.state_dir is not None
        warmed = worker.state_dir / "compile-cache" / "cpu"
        assert (warmed / "a-nice-start").read_text() == "19"
        assert (warmed / "c-mark").read_text() == "warmed"
        # Once warming is over nobody waits: a run of the slow one starts at once.
        again = worker.run(slow)
        assert again["events"][0]["type"] == "started"

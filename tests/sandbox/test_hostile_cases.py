"""Hostile code, one folder per case: the code and the verdict it must get. After each case
nothing of it is left running, no cgroup of it is left, and a normal run still succeeds.

expected.json: `verdict` (one or a list), `limits`, `stdout_contains`, `stdout_excludes`,
`stderr_contains`, `detail_contains`, `before` (another visitor's run first: the case must
see the same either way), `excludes_host_paths` (no line of the output holds a path of this
checkout or of this Python on the host)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.support.sandbox_worker import (
    WorkerHandle,
    host_paths,
    needs_isolation,
    run_cgroups,
    sandbox_processes,
)

CASES = sorted(p for p in (Path(__file__).parent / "cases").iterdir() if p.is_dir())
pytestmark = needs_isolation


def as_list(value: str | list[str] | None) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_case_is_contained(worker: WorkerHandle, case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    assert worker.state_dir is not None
    # The worker is the session's: a graded run of an earlier test (two jails) may still be
    # removing its second jail's cgroups. What is checked below is this case's own runs'.
    earlier = set(run_cgroups(worker.state_dir))
    baseline = None
    if "before" in expected:
        # What the case sees on its own, then after another visitor's run: the same.
        baseline = worker.run((case / "code.py").read_text())["stdout"]
        assert worker.run(expected["before"])["verdict"] == "ok"
    result = worker.run((case / "code.py").read_text(), limits=expected.get("limits"))
    verdicts = (
        expected["verdict"] if isinstance(expected["verdict"], list) else [expected["verdict"]]
    )
    assert result["verdict"] in verdicts, (
        result["verdict"],
        result["detail"],
        result["stderr"][-800:],
    )
    for text in as_list(expected.get("stdout_contains")):
        assert text in result["stdout"], result["stdout"][-800:]
    for text in as_list(expected.get("stdout_excludes")):
        assert text not in result["stdout"]
    for text in as_list(expected.get("stderr_contains")):
        assert text in result["stderr"], result["stderr"][-800:]
    if baseline is not None:
        assert result["stdout"] == baseline, "the other run left a trace"
    if "detail_contains" in expected:
        assert expected["detail_contains"] in result["detail"]
    if expected.get("excludes_host_paths"):
        for path in host_paths():
            for line in (result["stdout"] + result["stderr"]).splitlines():
                assert path not in line, f"{path} shows in: {line}"

    # Whatever ended the run, its cgroups are gone by the time its result is sent.
    assert [c for c in run_cgroups(worker.state_dir) if c not in earlier] == []

    deadline = time.monotonic() + 5
    while sandbox_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sandbox_processes() == []

    after = worker.run("import torch\nprint(torch.ones(2).sum().item())")
    assert after["verdict"] == "ok" and after["stdout"] == "2.0\n"
    assert after["wall_ms"] < 5000, "the sandbox is still busy with the previous case"

"""The suites proven by automatic mutants (sandbox/grading/mutate.py, mutation_run.py).

Each exercise's record is current (its digest matches the files it depends on: an exercise
whose reference, tests or equivalents changed is proven again here, so CI reruns only what
changed), every equivalent it sets aside still exists, and its score reaches the target of
95%. An exercise still below the target is listed in BELOW_TARGET with the score it has
reached, which it may not fall under: the list only shrinks."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from app.settings import PROJECT_ROOT
from sandbox.grading import mutate, mutation_run
from tests.grading.conftest import EXERCISES, exercise_folders

BELOW_TARGET: dict[str, float] = {}


def test_the_mutator_makes_each_operator_family() -> None:
    source = (
        "import torch\n\n"
        "def f(x, dim=-1, eps=1e-5):\n"
        '    """Docstring: 1 + 1 is not mutated."""\n'
        "    m = x.amax(dim=dim, keepdim=True)\n"
        "    y = (x - m).exp().detach()\n"
        "    if y.numel() > 0:\n"
        "        y = y / (y.sum(dim, keepdim=True) + eps)\n"
        "    return torch.where(y > 0.5, y[1:], y[:-1])\n"
    )
    made = mutate.mutants(source)
    ids = [m.id for m in made]
    operators = {m.operator for m in made}
    assert {"arithmetic", "comparison", "constant", "reduction", "copy", "epsilon", "statement",
            "arguments"} <= operators  # fmt: skip
    assert any(".amax -> .amin" in i for i in ids)
    assert any(".sum -> .mean" in i for i in ids)
    assert any(".detach() dropped" in i for i in ids)
    assert any("True -> False" in i for i in ids)  # keepdim
    assert any("-1 -> -2" in i for i in ids)  # dim
    assert any("epsilon dropped" in i for i in ids)
    assert any("if dropped" in i for i in ids)
    for mutant in made:
        assert mutant.source != ast.unparse(ast.parse(source))
        assert "1 + 1 is not mutated" in mutant.source
        compile(mutant.source, "mutant.py", "exec")
    assert len({m.source for m in made}) == len(made)


def test_a_survivor_is_found_and_a_killed_mutant_is_not(tmp_path: Path) -> None:
    """The runner itself, on a copy of an exercise whose suite is weakened on purpose."""
    import shutil

    folder = tmp_path / "stable-softmax"
    shutil.copytree(EXERCISES / "stable-softmax", folder)
    record = mutation_run.prove(folder, jobs=1)
    assert record["made"] == len(mutate.mutants((folder / "reference.py").read_text()))
    assert record["killed"] + len(record["survived"]) == record["made"] - record["equivalent"]
    assert "L9:C18 .amax -> .amin" not in {s["id"] for s in record["survived"]}
    assert mutation_run.cached(folder) == record
    (folder / "tests.py").write_text((folder / "tests.py").read_text() + "\n# changed\n")
    assert mutation_run.cached(folder) is None  # a change to the tests reproves it


def test_a_mutant_that_never_returns_is_cut_off_on_every_seed() -> None:
    """The alarm is not swallowed as the learner's error (which would leave the mutant
    looping, with no alarm left, on the next seed and the run never ending)."""
    import subprocess
    import sys

    program = (
        "from sandbox.grading import mutation_run as m\n"
        "m.MUTANT_SECONDS = 2\n"
        f"source = open({str(EXERCISES / 'stable-softmax' / 'reference.py')!r}).read()\n"
        "source += '\\ndef softmax(x, dim=-1):\\n    while True:\\n        pass\\n'\n"
        f"print(m.judge({str(EXERCISES / 'stable-softmax')!r}, source))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.strip().splitlines()[-1] == "('timeout', None)", done.stderr[-2000:]


@pytest.mark.parametrize("folder", exercise_folders(), ids=lambda p: p.name)
def test_every_suite_kills_its_automatic_mutants(folder: Path) -> None:
    record = mutation_run.cached(folder) or mutation_run.prove(folder, jobs=2)
    assert not record["stale_equivalents"], "equivalent_mutants.yml names mutants no longer made"
    assert record["seeds"] == list(mutation_run.SEEDS)
    floor = BELOW_TARGET.get(folder.name, mutation_run.TARGET)
    survivors = [s["id"] for s in record["survived"]][:8]
    assert record["score"] >= floor, f"{record['score']:.1%} < {floor:.1%}; survivors {survivors}"
    if folder.name in BELOW_TARGET:
        assert record["score"] < mutation_run.TARGET, "it reached the target: take it off"


@pytest.mark.parametrize("folder", exercise_folders(), ids=lambda p: p.name)
def test_equivalents_give_a_reason_each(folder: Path) -> None:
    for mutant_id, why in mutation_run.equivalents(folder).items():
        assert len(why) >= 20, f"{mutant_id}: say why it computes the same function"


def test_the_table_in_content_readme_is_current() -> None:
    readme = (PROJECT_ROOT / "content" / "README.md").read_text(encoding="utf-8")
    assert mutation_run.table(EXERCISES) in readme, (
        "run python -m sandbox.grading.mutation_run --table"
    )
    records = [json.loads((p / "mutation.json").read_text()) for p in exercise_folders()]
    assert all(r["made"] for r in records)

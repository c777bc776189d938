"""No correct solution refused: every exercise has at least three correct solutions written
differently from the reference (content/exercises/<slug>/alternatives/: einsum or loops,
float64 inside, another formula, `__all__`, a `__main__` self-test, helpers of their own),
and each passes every test on each of seeds 0-4. They were written from the statement by
solvers who had not read the hidden tests. tests/sandbox/test_grading_jail.py grades them
through the jailed path as well."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.grading.exercise import Exercise
from sandbox.grading.trusted import grade_in_process
from sandbox.protocol.grading import GradingVerdict, TestStatus
from tests.grading.conftest import exercise_folders

SEEDS = (0, 1, 2, 3, 4)
MIN_ALTERNATIVES = 3


def alternatives(folder: Path) -> list[Path]:
    return sorted((folder / "alternatives").glob("*.py"))


@pytest.mark.parametrize("folder", exercise_folders(), ids=lambda p: p.name)
def test_every_exercise_has_three_alternatives_unlike_the_reference(folder: Path) -> None:
    found = alternatives(folder)
    assert len(found) >= MIN_ALTERNATIVES, f"{folder.name}: {len(found)} alternatives"
    reference = (folder / "reference.py").read_text(encoding="utf-8")
    texts = [p.read_text(encoding="utf-8") for p in found]
    assert reference not in texts and len(set(texts)) == len(texts)
    for path, text in zip(found, texts, strict=True):
        assert text.startswith("# Style:"), f"{path.name}: name its style on the first line"


@pytest.mark.parametrize(
    ("slug", "name"),
    [(p.name, a.stem) for p in exercise_folders() for a in alternatives(p)],
)
def test_every_alternative_passes_on_five_seeds(
    slug: str, name: str, loaded: dict[str, Exercise]
) -> None:
    exercise = loaded[slug]
    code = (exercise.folder / "alternatives" / f"{name}.py").read_text(encoding="utf-8")
    for seed in SEEDS:
        report = grade_in_process(exercise, code, seed=seed)
        failing = [(t.name, t.message) for t in report.tests if t.status is not TestStatus.PASS]
        assert report.verdict is GradingVerdict.PASSED, (seed, failing)


def test_the_alternatives_include_the_styles_the_rules_once_refused() -> None:
    """`__all__` naming the entry point and a `__main__` self-test were refused by the old
    API rule; enough of them are kept to prove they pass."""
    texts = [a.read_text(encoding="utf-8") for p in exercise_folders() for a in alternatives(p)]
    assert sum("__all__" in t for t in texts) >= 10
    assert sum('if __name__ == "__main__":' in t for t in texts) >= 10

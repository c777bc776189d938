"""Each exercise's tests are honest: the reference passes every test with five different
seeds, the starter fails at least one, and every mutant (one classic bug each) fails at
least one hidden test on each of the same five seeds (a learner's submission gets a seed the
worker draws, so a mutant caught on one seed only would pass for some learners).

This full matrix runs with the trusted in-process runner (sandbox/grading/trusted.py): the
same grading loop as the jailed grader, with our own code on the learner's side. The jailed
two-process path is proven on a sample in tests/sandbox/test_grading_jail.py."""

from __future__ import annotations

import pytest

from sandbox.grading.exercise import Exercise
from sandbox.grading.trusted import grade_in_process
from sandbox.protocol.grading import GradingVerdict, TestStatus
from tests.grading.conftest import exercise_folders

SEEDS = (0, 1, 2, 3, 4)
NAMES = [p.name for p in exercise_folders()]


@pytest.mark.parametrize("slug", NAMES)
def test_the_reference_passes_every_test_with_five_seeds(
    slug: str, loaded: dict[str, Exercise]
) -> None:
    exercise = loaded[slug]
    for seed in SEEDS:
        report = grade_in_process(exercise, exercise.reference, seed=seed)
        failing = [(t.name, t.message) for t in report.tests if t.status is not TestStatus.PASS]
        assert report.verdict is GradingVerdict.PASSED, (seed, failing)
        assert report.score == 100.0


@pytest.mark.parametrize("slug", NAMES)
def test_the_starter_fails(slug: str, loaded: dict[str, Exercise]) -> None:
    exercise = loaded[slug]
    report = grade_in_process(exercise, exercise.starter, seed=0)
    assert report.verdict is not GradingVerdict.PASSED


@pytest.mark.parametrize(
    ("slug", "mutant"),
    [(p.name, m.stem) for p in exercise_folders() for m in sorted(p.glob("mutants/*.patch"))],
)
def test_every_mutant_fails_a_hidden_test_on_every_seed(
    slug: str, mutant: str, loaded: dict[str, Exercise]
) -> None:
    exercise = loaded[slug]
    escaped = []
    for seed in SEEDS:
        report = grade_in_process(exercise, exercise.mutants[mutant], seed=seed)
        if not [t for t in report.tests if t.hidden and t.status is not TestStatus.PASS]:
            escaped.append(seed)
    assert not escaped, f"no hidden test catches the mutant {mutant} with seeds {escaped}"


# The same matrix with the learner's side on the GPU, for every exercise that offers the CUDA
# backend: the reference passes within the tolerances stated for CUDA, and every mutant still
# fails a hidden test there. Skipped where torch sees no GPU (CI); docs/sandbox-and-grading.md
# says where these ran.
def _on_the_gpu(slug: str, loaded: dict[str, Exercise]) -> Exercise:
    import torch

    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA GPU on this host")
    exercise = loaded[slug]
    if "cuda" not in exercise.config.backends:
        pytest.skip(f"{slug} is graded on the CPU only")
    return exercise


@pytest.mark.parametrize("slug", NAMES)
def test_the_reference_passes_every_test_on_the_gpu(slug: str, loaded: dict[str, Exercise]) -> None:
    exercise = _on_the_gpu(slug, loaded)
    for seed in SEEDS[:2]:
        report = grade_in_process(exercise, exercise.reference, seed=seed, device="cuda")
        failing = [(t.name, t.message) for t in report.tests if t.status is not TestStatus.PASS]
        assert report.verdict is GradingVerdict.PASSED, (seed, failing)


@pytest.mark.parametrize(
    ("slug", "mutant"),
    [(p.name, m.stem) for p in exercise_folders() for m in sorted(p.glob("mutants/*.patch"))],
)
def test_every_mutant_fails_a_hidden_test_on_the_gpu(
    slug: str, mutant: str, loaded: dict[str, Exercise]
) -> None:
    exercise = _on_the_gpu(slug, loaded)
    report = grade_in_process(exercise, exercise.mutants[mutant], seed=0, device="cuda")
    caught = [t.name for t in report.tests if t.hidden and t.status is not TestStatus.PASS]
    assert caught, f"no hidden test catches the mutant {mutant} on the GPU"

"""The suites against bugs their authors did not write: tests/exercises/outside_bugs/<slug>/
holds 92 realistic bugs (two or three per exercise) written by a reviewer who had not read the
authored mutants, each a copy of the reference with one bug, its first line saying what.

Each must fail a hidden test on every one of seeds 0-4, except the escapes listed below,
which no check catches yet: the list only shrinks (a listed bug that is now caught fails this
test until it is taken off), so it is the record of what the grader still lets through."""

from __future__ import annotations

import pytest

from app.settings import PROJECT_ROOT
from sandbox.grading.exercise import Exercise
from sandbox.grading.trusted import grade_in_process
from sandbox.protocol.grading import TestStatus

BUGS = PROJECT_ROOT / "tests" / "exercises" / "outside_bugs"
SEEDS = (0, 1, 2, 3, 4)
# slug/bug -> the check that would catch it.
KNOWN_ESCAPES = {
    "adamw-bias-correction/zero_grad_zeroes_instead_of_none": "a hidden run where a parameter "
    "gets a gradient at the first step only (a visible test catches it)",
    "batchnorm2d-running-stats/running_stats_keep_autograd_history": "inputs that require "
    "grad, as a real caller's activations do",
    "checkpoint-exact-resume/checkpoint_shares_storage_with_live_params": "a checkpoint kept "
    "in the learner's process while training goes on",
    "clip-grad-norm/grads_replaced_not_in_place": "gradients held by the caller, read after",
    "clip-grad-norm/inf_norm_fails_on_empty_grad": "a parameter with zero elements, once the "
    "statement says what it gives (torch.nn.utils.clip_grad_norm_ itself raises there)",
    "grad-scaler-step/caller_state_mutated": "a state dict kept in the learner's process",
    "kv-cache-decoding/forward_goes_through_cache": "forward called between decoding steps",
}


def bugs() -> list[str]:
    return sorted(f"{p.parent.name}/{p.stem}" for p in BUGS.glob("*/*.py"))


def test_the_escapes_listed_are_bugs_on_file() -> None:
    assert set(KNOWN_ESCAPES) <= set(bugs())
    assert len(bugs()) >= 90


@pytest.mark.parametrize("bug", bugs())
def test_an_outside_bug_fails_a_hidden_test_on_every_seed(
    bug: str, loaded: dict[str, Exercise]
) -> None:
    slug, _ = bug.split("/")
    exercise = loaded[slug]
    code = (BUGS / f"{bug}.py").read_text(encoding="utf-8")
    assert code.startswith("# Bug: ")
    caught = []
    for seed in SEEDS:
        report = grade_in_process(exercise, code, seed=seed)
        if any(t.hidden and t.status is not TestStatus.PASS for t in report.tests):
            caught.append(seed)
    if bug in KNOWN_ESCAPES:
        assert len(caught) < len(SEEDS), f"{bug} is caught now: take it off KNOWN_ESCAPES"
    else:
        assert caught == list(SEEDS), f"{bug} escapes on seeds {sorted(set(SEEDS) - set(caught))}"

"""Case generators guarantee what a test is named for: a test that declares
`guarantee=` (sandbox/grading/dsl.py) gets, on every drawn case of seeds 0-4, inputs where
the parameter under test has an effect (a base other than the default on more than one
frequency, a tie that occurs...)."""

from __future__ import annotations

import pytest

from sandbox.grading.draws import Draw, case_seed
from sandbox.grading.exercise import Exercise
from tests.grading.conftest import exercise_folders

SEEDS = (0, 1, 2, 3, 4)


def declared(loaded: dict[str, Exercise]) -> list[tuple[str, str]]:
    return [
        (slug, t.name)
        for slug, exercise in loaded.items()
        for t in exercise.tests()
        if t.options.get("guarantee") is not None
    ]


@pytest.mark.parametrize("slug", [p.name for p in exercise_folders()])
def test_every_drawn_case_has_what_its_test_is_named_for(
    slug: str, loaded: dict[str, Exercise]
) -> None:
    for test in loaded[slug].tests():
        guarantee = test.options.get("guarantee")
        if guarantee is None:
            continue
        assert test.inputs is not None
        for seed in SEEDS:
            for index in range(test.cases):
                for k, dtype in enumerate(test.dtypes):
                    c = test.inputs(Draw(case_seed(seed, test.name, index * 8 + k), index, dtype))
                    assert guarantee(c), f"{test.name!r}, seed {seed}, case {index + 1}"


def test_the_rotary_bases_are_guaranteed_to_matter(loaded: dict[str, Exercise]) -> None:
    assert ("rotary-embedding", "other bases") in declared(loaded)

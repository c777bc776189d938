"""What the web app reads of each exercise without running tests.py (it never imports
torch) agrees with what the grader itself declares: the same visible tests, in order."""

from __future__ import annotations

import pytest

from app.importer.exercise_tests import visible_tests
from sandbox.grading.exercise import Exercise
from tests.exercises.conftest import exercise_folders


@pytest.mark.parametrize("slug", [p.name for p in exercise_folders()])
def test_the_app_reads_the_visible_tests_the_grader_declares(
    slug: str, loaded: dict[str, Exercise]
) -> None:
    exercise = loaded[slug]
    read = visible_tests(exercise.tests_source, f"exercises/{slug}/tests.py")
    assert read == exercise.visible_tests()
    assert read  # Run mode has something to run

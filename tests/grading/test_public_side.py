"""What the web app reads of each exercise without running tests.py (it never imports
torch) agrees with what the grader itself declares: the same visible tests, in order."""

from __future__ import annotations

import pytest

from app.importer.exercise_tests import visible_tests
from sandbox.grading.exercise import Exercise
from tests.grading.conftest import exercise_folders


@pytest.mark.parametrize("slug", [p.name for p in exercise_folders()])
def test_the_app_reads_the_visible_tests_the_grader_declares(
    slug: str, loaded: dict[str, Exercise]
) -> None:
    exercise = loaded[slug]
    read = visible_tests(exercise.tests_source, f"exercises/{slug}/tests.py")
    assert read == exercise.visible_tests()
    assert read  # Run mode has something to run


def test_the_statement_and_the_grader_read_one_list_of_forbidden_names() -> None:
    from app.importer import forbidden
    from sandbox.grading import api_rules

    assert forbidden.ALIASES == api_rules.ALIASES


@pytest.mark.parametrize("slug", [p.name for p in exercise_folders()])
def test_the_statement_names_every_forbidden_api_and_why(
    slug: str, loaded: dict[str, Exercise]
) -> None:
    from app.importer.forbidden import HEADING, forbidden_section

    config = loaded[slug].config
    section = forbidden_section(config.forbid or None, config.forbid_reason, slug)
    if not config.forbid:
        assert section == ""
        return
    assert section.startswith(HEADING) and config.forbid_reason in section
    for entry in config.forbid:
        assert f"`{entry}`" in section


def test_the_imported_statement_carries_the_forbidden_section() -> None:
    """Through the importer itself: the stored statement ends with the generated list."""
    from app.importer.exercises import _fields
    from app.importer.exercises import _read as read_texts
    from tests.grading.conftest import EXERCISES

    folder = EXERCISES / "stable-softmax"
    texts = read_texts(folder)
    fields = _fields(folder, texts, {"foundations"}, _all_items())
    assert "Not allowed in this exercise" in fields["statement_markdown"]
    assert "torch.nn.functional.softmax" in fields["statement_html"]
    assert fields["statement_markdown"].startswith(texts["statement.md"].rstrip("\n"))


def _all_items() -> set[str]:
    import yaml

    from tests.grading.conftest import EXERCISES

    slugs: set[str] = set()
    for yml in EXERCISES.glob("*/exercise.yml"):
        slugs |= set(yaml.safe_load(yml.read_text())["items"])
    return slugs

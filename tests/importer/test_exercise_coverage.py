"""Every Q&A item of the interview decks has an exercise, or a reason it has none that its
page shows (app/importer/exercise_coverage.py); content/README.md's table says which."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.importer.exercise_coverage import (
    WITHOUT_FILE,
    Coverage,
    load_coverage,
    problems,
    read_without,
    table_markdown,
)
from app.settings import PROJECT_ROOT

CONTENT_DIR = PROJECT_ROOT / "content"


def test_every_item_has_an_exercise_or_a_reason_and_never_both() -> None:
    coverage = load_coverage(CONTENT_DIR)
    assert len(coverage) == 58
    assert problems(coverage, read_without(CONTENT_DIR / WITHOUT_FILE)) == []


def test_the_rule_catches_an_item_with_neither_both_or_an_unknown_one() -> None:
    def item(slug: str, exercises: tuple[str, ...], without: str | None) -> Coverage:
        return Coverage("deep-learning", 1, slug, "T?", exercises, without)

    coverage = [item("a", (), None), item("b", ("x",), "why"), item("c", (), "why")]
    found = problems(coverage, {"b": "why", "c": "why", "ghost": "why"})
    assert found == [
        "a: no exercise and no reason",
        f"b: has exercises yet is listed in {WITHOUT_FILE}",
        f"ghost: listed in {WITHOUT_FILE} but no such item",
    ]


def test_a_without_file_that_is_not_a_map_of_reasons_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "without.yml"
    path.write_text("pytorch-vs-tensorflow: ''\n")
    try:
        read_without(path)
    except Exception as exc:  # ContentError names the file
        assert WITHOUT_FILE in str(exc)
    else:
        raise AssertionError("an empty reason was accepted")


def test_the_readme_table_is_current() -> None:
    readme = (CONTENT_DIR / "README.md").read_text(encoding="utf-8")
    section = readme.split("<!-- exercise-coverage:start", 1)[1].split("-->", 1)[1]
    shown = section.split("<!-- exercise-coverage:end -->", 1)[0].strip()
    assert shown == table_markdown(load_coverage(CONTENT_DIR)), (
        "run `backprop exercise-coverage --write-readme`"
    )


def test_an_item_without_exercises_says_why_on_its_page(client: TestClient) -> None:
    reasons = read_without(CONTENT_DIR / WITHOUT_FILE)
    slug, why = next(iter(reasons.items()))
    page = client.get(f"/items/{slug}").text
    assert "Nothing to write here" in page
    assert why.split(":")[0] in page.replace("&#39;", "'")
    drilled = client.get("/items/batch-normalization").text
    assert "Write it yourself" in drilled and "Nothing to write here" not in drilled


def test_the_command_prints_the_table_and_fails_on_an_uncovered_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli import main as cli

    assert cli(["exercise-coverage", "--content", str(CONTENT_DIR)]) == 0
    assert capsys.readouterr().out.strip() == table_markdown(load_coverage(CONTENT_DIR))
    copy = tmp_path / "content"
    shutil.copytree(CONTENT_DIR, copy, ignore=shutil.ignore_patterns("exercises"))
    (copy / "exercises").mkdir()
    assert cli(["exercise-coverage", "--content", str(copy)]) == 1
    err = capsys.readouterr().err
    assert "not covered: batch-normalization: no exercise and no reason" in err
    assert "pytorch-vs-tensorflow" not in err  # it has its reason

"""Importing exercises: the public side of each folder becomes a row, a change to a folder
updates it, a gone folder goes, and a folder that breaks the format stops the import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.importer import ContentError, import_content
from app.models import Exercise


def rows(engine: Engine) -> dict[str, Exercise]:
    with Session(engine) as session:
        return {e.slug: e for e in session.exec(select(Exercise))}


def test_exercises_are_imported_updated_and_removed(
    empty_engine: Engine, content_copy: Path
) -> None:
    import_content(empty_engine, content_copy)
    folders = sorted(p.name for p in (content_copy / "exercises").iterdir())
    found = rows(empty_engine)
    assert sorted(found) == folders
    softmax = found["stable-softmax"]
    assert softmax.topic_slug == "foundations" and softmax.entry_point == "softmax"
    assert "<h" in softmax.statement_html and "Example" in softmax.statement_html
    assert json.loads(softmax.visible_tests)[0]["name"] == "softmax of small rows"
    assert import_content(empty_engine, content_copy).exercises == []  # nothing changed

    statement = content_copy / "exercises" / "stable-softmax" / "statement.md"
    statement.write_text(statement.read_text() + "\nOne more line.\n")
    report = import_content(empty_engine, content_copy)
    assert report.exercises == ["exercises/stable-softmax"]
    assert "One more line." in rows(empty_engine)["stable-softmax"].statement_markdown

    for path in sorted((content_copy / "exercises" / "stable-softmax").rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (content_copy / "exercises" / "stable-softmax").rmdir()
    import_content(empty_engine, content_copy)
    assert "stable-softmax" not in rows(empty_engine)


def test_an_exercise_drilling_an_unknown_item_stops_the_import(
    empty_engine: Engine, content_copy: Path
) -> None:
    config = content_copy / "exercises" / "stable-softmax" / "exercise.yml"
    config.write_text(config.read_text().replace("activation-functions", "no-such-item"))
    with pytest.raises(ContentError, match="no-such-item"):
        import_content(empty_engine, content_copy)
    assert rows(empty_engine) == {}


def test_a_hidden_test_name_that_is_not_a_literal_stops_the_import(
    empty_engine: Engine, content_copy: Path
) -> None:
    tests = content_copy / "exercises" / "stable-softmax" / "tests.py"
    tests.write_text(tests.read_text().replace('values("softmax of small rows"', "values(NAME"))
    with pytest.raises(ContentError, match="string literal"):
        import_content(empty_engine, content_copy)


def test_every_exercise_has_follow_ups_with_key_points(
    empty_engine: Engine, content_copy: Path
) -> None:
    import_content(empty_engine, content_copy)
    for slug, row in rows(empty_engine).items():
        followups = row.followup_list
        assert 1 <= len(followups) <= 3, slug
        assert all(f["prompt"] and 2 <= len(f["key_points"]) <= 6 for f in followups), slug
    pre_ln = rows(empty_engine)["pre-ln-transformer-block"].followup_list
    assert any("pre-LN" in f["prompt"] for f in pre_ln)


def test_a_follow_up_change_reimports_and_a_bad_one_stops_the_import(
    empty_engine: Engine, content_copy: Path
) -> None:
    import_content(empty_engine, content_copy)
    path = content_copy / "exercises" / "stable-softmax" / "followups.yml"
    path.write_text(path.read_text().replace("Why subtract", "Why do you subtract"))
    assert import_content(empty_engine, content_copy).exercises == ["exercises/stable-softmax"]
    assert "Why do you subtract" in rows(empty_engine)["stable-softmax"].followups
    path.write_text("followups:\n  - prompt: One point is not enough\n    key_points: [only]\n")
    with pytest.raises(ContentError, match="2 to 6 key points"):
        import_content(empty_engine, content_copy)

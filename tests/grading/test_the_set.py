"""The exercise set as a whole: its size, its spread of difficulty, and the exercises graded
on speed, each of which says so in its statement (content/README.md, "Exercises")."""

from __future__ import annotations

from collections import Counter

import yaml

from app.settings import PROJECT_ROOT

EXERCISES = PROJECT_ROOT / "content" / "exercises"
AT_LEAST = {"easy": 15, "medium": 25, "hard": 10}


def metadata() -> dict[str, dict[str, object]]:
    return {
        p.parent.name: yaml.safe_load(p.read_text(encoding="utf-8"))
        for p in sorted(EXERCISES.glob("*/exercise.yml"))
    }


def test_sixty_exercises_spread_over_the_three_difficulties() -> None:
    found = metadata()
    assert len(found) >= 60
    levels = Counter(str(m["difficulty"]) for m in found.values())
    assert {level: levels[level] for level in AT_LEAST} == {
        level: max(levels[level], n) for level, n in AT_LEAST.items()
    }


def test_five_exercises_are_graded_on_speed_and_their_statements_say_so() -> None:
    graded = {
        slug: m["performance"]
        for slug, m in metadata().items()
        if isinstance(m.get("performance"), dict) and m["performance"].get("graded")
    }
    assert len(graded) >= 5
    for slug, settings in graded.items():
        assert isinstance(settings, dict)
        ratio = float(settings["max_ratio"])
        assert 1.0 < ratio <= 5.0, slug
        statement = (EXERCISES / slug / "statement.md").read_text(encoding="utf-8")
        said = (f"{ratio:g}x", f"{ratio:g}×", f"{ratio:g} times")
        assert any(s in statement for s in said), f"{slug}: the statement never gives {ratio:g}x"


def test_the_readme_and_the_features_page_count_the_exercises_there_are() -> None:
    count = len(metadata())
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    features = (PROJECT_ROOT / "docs" / "features.md").read_text(encoding="utf-8")
    assert f"**Code exercises**: {count} exercises" in readme
    assert f"\n{count} exercises in writing the code" in features

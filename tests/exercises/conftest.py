from __future__ import annotations

from pathlib import Path

import pytest

from app.settings import PROJECT_ROOT
from sandbox.grading.exercise import Exercise, load

EXERCISES = PROJECT_ROOT / "content" / "exercises"


def exercise_folders() -> list[Path]:
    return sorted(p for p in EXERCISES.iterdir() if p.is_dir() and not p.name.startswith("."))


@pytest.fixture(scope="session")
def loaded() -> dict[str, Exercise]:
    return {p.name: load(p) for p in exercise_folders()}

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


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread() -> object:
    """The honesty matrix grades in this process on tiny tensors, where torch's thread pool
    costs far more than it gains (tens of times slower on a loaded 2-core machine); the
    jailed grader sets its own threads."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)

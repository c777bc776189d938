"""Where the tests find the content and the source texts it was written from."""

from __future__ import annotations

from pathlib import Path

from app.settings import PROJECT_ROOT

CONTENT_DIR = PROJECT_ROOT / "content"
DATA_DIR: Path = Path(__file__).resolve().parent.parent / "data"
SEEDS_DIR: Path = DATA_DIR / "seeds"
# The exercise folders (content/exercises/<slug>/), for tests that count the whole set.
EXERCISE_COUNT = sum(1 for p in (CONTENT_DIR / "exercises").iterdir() if p.is_dir())

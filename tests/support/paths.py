"""Where the tests find the content and the source texts it was written from."""

from __future__ import annotations

from pathlib import Path

from app.settings import PROJECT_ROOT

CONTENT_DIR = PROJECT_ROOT / "content"
DATA_DIR: Path = Path(__file__).resolve().parent.parent / "data"
SEEDS_DIR: Path = DATA_DIR / "seeds"

"""The garbage collector as the app leaves it once started: what was loaded frozen, and the
young generation's threshold raised above what the pages in flight hold (app/main.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.main import YOUNG_GC_THRESHOLD, create_app
from app.settings import Settings


@pytest.fixture
def fresh_collector() -> Iterator[None]:
    """The collector as a new process has it, whatever earlier tests' apps did: CPython's own
    thresholds and nothing frozen. The thresholds are put back afterwards."""
    kept = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    gc.unfreeze()
    yield
    gc.set_threshold(*kept)


@pytest.mark.usefixtures("fresh_collector")
def test_a_started_app_freezes_what_it_loaded_and_raises_the_young_threshold(
    settings: Settings,
) -> None:
    with TestClient(create_app(settings)) as client:
        assert client.get("/items/batch-normalization").status_code == 200
        young, middle, old = gc.get_threshold()
        assert young == YOUNG_GC_THRESHOLD
        assert (middle, old) == (10, 10)  # only the youngest generation's is changed
        assert gc.get_freeze_count() > 0

"""The sandbox tests share the session's worker (tests/conftest.py); tests of the worker's
own logic use `warm_up`, a host that can isolate code but warms no real zygote."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from sandbox import cgroups, host
from sandbox.cgroups import Layout
from sandbox.pool import Pool
from sandbox.zygote_client import ZygoteDied


class WarmUp:
    """Stands in for warming the zygotes: over when a test says so, in success or not."""

    def __init__(self) -> None:
        self.fail = False
        self.over: asyncio.Event | None = None  # made on the test's own loop

    async def ensure_zygote(self, pool: Pool) -> Any:
        self.over = self.over or asyncio.Event()
        await self.over.wait()
        if self.fail:
            raise ZygoteDied(f"the {pool.backend} warm process exited while starting")

    def end(self) -> None:
        assert self.over is not None, "nothing began warming"
        self.over.set()


@pytest.fixture
def warm_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> WarmUp:
    """A host that says it can isolate code, has no GPU, and warms zygotes on cue."""
    warm_up = WarmUp()
    monkeypatch.setattr(host, "isolation_problem", lambda: None)
    # The runs' cgroups go to a fake v1 tree: these tests touch nothing of the host's.
    fake = tmp_path / "cgroupfs"
    layout = Layout(version=1, dirs={c: fake / c for c in cgroups.layout.V1_REQUIRED})
    (fake / "memory" / cgroups.PARENT).mkdir(parents=True)
    monkeypatch.setattr(cgroups, "tree", lambda key: _FakeTree(layout, key))
    monkeypatch.setattr(host, "probe_cuda", lambda env: None)
    monkeypatch.setattr(Pool, "ensure_zygote", lambda pool: warm_up.ensure_zygote(pool))
    return warm_up


class _FakeTree(cgroups.TreeV1):
    def prepare(self) -> None:
        for path in self.bases():
            path.mkdir(parents=True, exist_ok=True)
        (self.base["memory"] / "memory.limit_in_bytes").write_text("max")

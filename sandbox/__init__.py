"""The code sandbox worker (placeholder until live code lands).

This package will hold the worker that runs user code in jailed processes. It must never
import from `app/`. Until the worker exists it reports itself unavailable, and nothing in
Backprop executes user code."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxStatus:
    available: bool
    backends: tuple[str, ...]
    device: str | None
    detail: str


def status() -> SandboxStatus:
    """What this host can run. Today: nothing, said plainly."""
    return SandboxStatus(
        available=False,
        backends=(),
        device=None,
        detail="Running code is not enabled on this server yet.",
    )

"""Telling the sandbox when a lab compiles: on the sandbox's pipe for it, one word per line.
The sandbox then times compiling against an allowance of its own, apart from the run's
wall-clock limit, and the page shows "compiling, 14 s" (sandbox/phases.py). Outside the
sandbox there is no pipe and this does nothing."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextlib import contextmanager

PHASE_FD_ENV = "BACKPROP_PHASE_FD"  # the same name as sandbox/phases.py's (a test holds it)


def report(phase: str) -> None:
    """Say that the run has begun `phase` ("compiling" or "running")."""
    fd = os.environ.get(PHASE_FD_ENV)
    if not fd:
        return
    # When the sandbox has stopped listening, the run goes on, timed as running.
    with contextlib.suppress(OSError, ValueError):
        os.write(int(fd), f"{phase}\n".encode())


@contextmanager
def compiling() -> Iterator[None]:
    """The block compiles: say so before it, and say "running" after it, however it ends."""
    report("compiling")
    try:
        yield
    finally:
        report("running")

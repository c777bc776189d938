"""What an agent hands runs to: the host's sandbox worker, or a script (for tests)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from app.runqueue.fake import FAKE_DEVICE, default_script
from app.runqueue.worker_socket import run_events, worker_status
from sandbox.protocol import Event, Finished, RunRequest, Started, WorkerState, WorkerStatus


class Executor(Protocol):
    async def status(self) -> WorkerStatus: ...

    def run(self, request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        """The run's events, ending with Finished; setting `cancel` stops it.
        WorkerUnreachable when nothing was handed over, WorkerLost when the run was handed
        over and then lost."""
        ...


class SocketExecutor:
    """The sandbox worker listening at `socket_path` (sandbox/protocol)."""

    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path

    async def status(self) -> WorkerStatus:
        return await worker_status(self.socket_path)

    def run(self, request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        return run_events(self.socket_path, request, cancel)


class ScriptExecutor:
    """Plays app/runqueue/fake.py's script: no code runs (`--executor fake`, for tests of
    the fleet around the sandbox)."""

    def __init__(self, pool: str) -> None:
        self.pool = pool

    async def status(self) -> WorkerStatus:
        devices = {self.pool: FAKE_DEVICE}
        return WorkerStatus(WorkerState.READY, [self.pool], FAKE_DEVICE, devices, "ready")

    async def run(self, request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        async for event in default_script(request, cancel):  # as if on this agent's pool
            if isinstance(event, Started):
                yield Started(self.pool, event.device)
            elif isinstance(event, Finished):
                yield Finished(replace(event.result, backend=self.pool))
            else:
                yield event

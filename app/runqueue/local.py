"""The one-machine adapter: the sandbox worker's Unix socket, speaking sandbox/protocol.
Nothing else in the app knows how or where code runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

from app.runqueue.base import InProcessQueue, RunObserver
from app.runqueue.worker_socket import run_events, worker_status
from sandbox.protocol import Event, RunRequest, WorkerStatus

STATUS_TTL_SECONDS = 5.0


class LocalRunQueue(InProcessQueue):
    """Runs go to the worker at `socket_path`; its status is cached for a few seconds."""

    def __init__(self, socket_path: Path, observer: RunObserver) -> None:
        super().__init__(observer)
        self.socket_path = socket_path
        self._status: tuple[float, WorkerStatus] | None = None

    async def status(self) -> WorkerStatus:
        now = time.monotonic()
        if self._status and now - self._status[0] < STATUS_TTL_SECONDS:
            return self._status[1]
        status = await worker_status(self.socket_path)
        self._status = (now, status)
        return status

    def source(self, request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        """The run's events from the worker; setting `cancel` (or closing this generator
        early) stops the run."""
        return run_events(self.socket_path, request, cancel)

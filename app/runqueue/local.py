"""The one-machine adapter: the sandbox worker's Unix socket, speaking sandbox/protocol.
Nothing else in the app knows how or where code runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

from app.runqueue.base import InProcessQueue, RunObserver, WorkerUnreachable
from sandbox.protocol import (
    PROTOCOL_VERSION,
    Event,
    Finished,
    RunRequest,
    WorkerStatus,
    decode,
    encode,
    event_from_json,
)

STATUS_TTL_SECONDS = 5.0
STATUS_TIMEOUT_SECONDS = 5.0
MAX_MESSAGE_BYTES = 1 << 22  # a result holds at most the output ceiling, JSON-escaped


class LocalRunQueue(InProcessQueue):
    """Runs go to the worker at `socket_path`; its status is cached for a few seconds."""

    def __init__(self, socket_path: Path, observer: RunObserver) -> None:
        super().__init__(observer)
        self.socket_path = socket_path
        self._status: tuple[float, WorkerStatus] | None = None

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            return await asyncio.open_unix_connection(
                str(self.socket_path), limit=MAX_MESSAGE_BYTES
            )
        except OSError as exc:
            raise WorkerUnreachable(f"the sandbox worker is not running ({exc.strerror})") from None

    async def status(self) -> WorkerStatus:
        now = time.monotonic()
        if self._status and now - self._status[0] < STATUS_TTL_SECONDS:
            return self._status[1]
        try:
            reader, writer = await self._connect()
            try:
                writer.write(encode({"op": "status"}))
                await writer.drain()
                line = await asyncio.wait_for(reader.readline(), STATUS_TIMEOUT_SECONDS)
                status = WorkerStatus.from_json(decode(line))
            finally:
                writer.close()
        except (WorkerUnreachable, OSError, ValueError, TimeoutError) as exc:
            status = WorkerStatus.unavailable(f"Code cannot run right now: {exc}.")
        self._status = (now, status)
        return status

    async def source(self, request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        """The run's events from the worker; setting `cancel` (or closing this generator
        early) stops the run."""
        reader, writer = await self._connect()

        async def send_cancel() -> None:
            await cancel.wait()
            writer.write(encode({"op": "cancel"}))
            await writer.drain()

        watcher = asyncio.create_task(send_cancel())
        try:
            message = {"op": "run", "v": PROTOCOL_VERSION, "request": request.to_json()}
            writer.write(encode(message))
            await writer.drain()
            while line := await reader.readline():
                try:
                    event = event_from_json(decode(line))
                except ValueError as exc:
                    raise WorkerUnreachable(f"the sandbox worker sent {exc}") from None
                yield event
                if isinstance(event, Finished):
                    return
            raise WorkerUnreachable("the sandbox worker closed the connection mid-run")
        finally:
            watcher.cancel()
            writer.close()

"""Talking to a sandbox worker over its Unix socket, in sandbox/protocol's terms: its status,
and one run's events. The local adapter and the fleet's runner agent both speak it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from sandbox.protocol import (
    Event,
    Finished,
    RunRequest,
    WorkerStatus,
    decode,
    encode,
    event_from_json,
)

STATUS_TIMEOUT_SECONDS = 5.0
MAX_MESSAGE_BYTES = 1 << 22  # a result holds at most the output ceiling, JSON-escaped


class WorkerUnreachable(Exception):
    """The worker could not be reached: nothing was handed to it."""


class WorkerLost(WorkerUnreachable):
    """The worker went away, or spoke nonsense, after a run was handed to it: the run may
    have started."""


async def connect(socket_path: Path) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    try:
        return await asyncio.open_unix_connection(str(socket_path), limit=MAX_MESSAGE_BYTES)
    except OSError as exc:
        raise WorkerUnreachable(f"the sandbox worker is not running ({exc.strerror})") from None


async def worker_status(socket_path: Path) -> WorkerStatus:
    """The worker's answer to {"op": "status"}, or `unavailable` saying why there is none."""
    try:
        reader, writer = await connect(socket_path)
        try:
            writer.write(encode({"op": "status"}))
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), STATUS_TIMEOUT_SECONDS)
            return WorkerStatus.from_json(decode(line))
        finally:
            writer.close()
    except (WorkerUnreachable, OSError, ValueError, TimeoutError) as exc:
        return WorkerStatus.unavailable(f"Code cannot run right now: {exc}.")


async def run_events(
    socket_path: Path, request: RunRequest, cancel: asyncio.Event
) -> AsyncIterator[Event]:
    """The run's events from the worker, ending with Finished; setting `cancel` (or closing
    this generator early) stops the run. WorkerUnreachable before the run was handed over,
    WorkerLost after."""
    reader, writer = await connect(socket_path)

    async def send_cancel() -> None:
        await cancel.wait()
        writer.write(encode({"op": "cancel"}))
        await writer.drain()

    watcher = asyncio.create_task(send_cancel())
    try:
        # The lowest version that carries the request: a plain run still reaches a worker
        # that predates graded runs.
        message = {"op": "run", "v": request.protocol_version(), "request": request.to_json()}
        try:
            writer.write(encode(message))
            await writer.drain()
        except OSError as exc:
            raise WorkerLost(f"the sandbox worker went away ({exc.strerror})") from None
        while line := await reader.readline():
            try:
                event = event_from_json(decode(line))
            except ValueError as exc:
                raise WorkerLost(f"the sandbox worker sent {exc}") from None
            yield event
            if isinstance(event, Finished):
                return
        raise WorkerLost("the sandbox worker closed the connection mid-run")
    finally:
        watcher.cancel()
        writer.close()

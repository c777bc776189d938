"""The app's only door to the sandbox worker: a Unix-socket client speaking the protocol in
sandbox/protocol.py. Nothing else in the app knows how or where code runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.protocol import RunRequest, decode, encode

STATUS_TTL_SECONDS = 5.0


class SandboxUnavailable(Exception):
    """The worker cannot be reached."""


@dataclass(frozen=True)
class SandboxStatus:
    available: bool
    backends: tuple[str, ...]
    device: str | None
    devices: dict[str, str]
    detail: str


class SandboxClient:
    """Talks to the worker at `socket_path`; status answers are cached for a few seconds."""

    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path
        self._status: tuple[float, SandboxStatus] | None = None

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            return await asyncio.open_unix_connection(str(self.socket_path), limit=1 << 22)
        except OSError as exc:
            raise SandboxUnavailable(
                f"the sandbox worker is not running ({exc.strerror})"
            ) from None

    async def status(self) -> SandboxStatus:
        now = time.monotonic()
        if self._status and now - self._status[0] < STATUS_TTL_SECONDS:
            return self._status[1]
        try:
            reader, writer = await self._connect()
            writer.write(encode({"op": "status"}))
            await writer.drain()
            reply = decode(await asyncio.wait_for(reader.readline(), timeout=5))
            writer.close()
            status = SandboxStatus(
                available=bool(reply["available"]),
                backends=tuple(reply["backends"]),
                device=reply.get("device"),
                devices=dict(reply.get("devices") or {}),
                detail=str(reply.get("detail", "")),
            )
        except (SandboxUnavailable, OSError, ValueError, KeyError, TimeoutError) as exc:
            status = SandboxStatus(False, (), None, {}, f"Code cannot run right now: {exc}.")
        self._status = (now, status)
        return status

    async def run(
        self, request: RunRequest, cancel: asyncio.Event | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """Send one run; yield its events, the last being {"type": "result", ...}. Setting
        `cancel` (or closing the generator early) stops the run."""
        reader, writer = await self._connect()

        async def send_cancel() -> None:
            if cancel is not None:
                await cancel.wait()
                writer.write(encode({"op": "cancel"}))
                await writer.drain()

        watcher = asyncio.create_task(send_cancel())
        try:
            writer.write(encode({"op": "run", "request": request.to_json()}))
            await writer.drain()
            while line := await reader.readline():
                event = decode(line)
                yield event
                if event.get("type") == "result":
                    return
            raise SandboxUnavailable("the sandbox worker closed the connection mid-run")
        finally:
            watcher.cancel()
            writer.close()

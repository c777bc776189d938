"""A run's stdout and stderr: streamed to the client as they come, kept for the result, and
cut off at the run's output limit."""

from __future__ import annotations

import asyncio
import codecs
from collections.abc import Callable
from typing import Literal

from sandbox.protocol import Emit, Output

Stream = Literal["stdout", "stderr"]
TRUNCATION_MARKER = "\n[output truncated: the run printed more than {limit}]\n"


def human_bytes(n: int) -> str:
    return f"{n // 1024} KiB" if n < 1024 * 1024 else f"{n / (1024 * 1024):.0f} MiB"


class OutputStreams:
    """Both streams of one run, counted together against one limit. Past it, `on_limit` is
    called (the run is stopped) and what is kept ends with a visible marker."""

    def __init__(self, limit: int, emit: Emit, on_limit: Callable[[], None]) -> None:
        self.limit = limit
        self.emit = emit
        self.on_limit = on_limit
        self.total = 0
        self.truncated = False
        self.client_gone = False
        self.kept: dict[Stream, list[str]] = {"stdout": [], "stderr": []}

    async def pump(self, queue: asyncio.Queue[bytes], stream: Stream) -> None:
        """Read `stream`'s chunks until its pipe closes (b'')."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := await queue.get():
            if self.truncated:
                continue  # drain until the kill closes the pipe
            room = self.limit - self.total
            self.total += len(chunk)
            if len(chunk) > room:
                chunk = chunk[: max(room, 0)]
                self.truncated = True
            text = decoder.decode(chunk)
            if self.truncated:
                text += decoder.decode(b"", final=True)
                text += TRUNCATION_MARKER.format(limit=human_bytes(self.limit))
                self.on_limit()
            await self._keep(stream, text)
        await self._keep(stream, decoder.decode(b"", final=True))

    async def _keep(self, stream: Stream, text: str) -> None:
        if not text:
            return
        self.kept[stream].append(text)
        if self.client_gone:
            return
        try:
            await self.emit(Output(stream, text))
        except ConnectionError:
            # Keep draining the pipe all the same: a reader that stopped here would leave
            # the code blocked on a full pipe, and the run's clean-up waiting on it.
            self.client_gone = True

    def text(self, stream: Stream) -> str:
        return "".join(self.kept[stream])

"""A run's stdout and stderr: read from their pipes, streamed to the client in coalesced
events, kept for the result, and cut off at the run's output limit.

Coalescing: a program printing in a tight loop writes one line per system call, and one event
per read made tens of thousands of events a second. Output now waits in a buffer until it
holds FLUSH_BYTES or has waited the flush delay, whichever comes first: FIRST_FLUSH_SECONDS
after a quiet spell (interactive output appears at once), STEADY_FLUSH_SECONDS while output
keeps coming (at most five events a second per stream, a few hundred for a 60 s run).

NUL bytes are replaced with U+FFFD in the text, in the events and in the result alike: the
app stores output in PostgreSQL text columns, which cannot hold NUL."""

from __future__ import annotations

import asyncio
import codecs
import os
import time
from collections.abc import Callable
from typing import Literal

from sandbox.protocol import Emit, Output

Stream = Literal["stdout", "stderr"]
STREAMS: tuple[Stream, Stream] = ("stdout", "stderr")
TRUNCATION_MARKER = "\n[output truncated: the run printed more than {limit}]\n"
FLUSH_BYTES = 16 * 1024
FIRST_FLUSH_SECONDS = 0.05
STEADY_FLUSH_SECONDS = 0.2
QUIET_SECONDS = 1.0  # this long without a flush, and the next output counts as interactive
READ_BYTES = 65536


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
        self.kept: dict[Stream, list[str]] = {s: [] for s in STREAMS}
        self.pending: dict[Stream, list[str]] = {s: [] for s in STREAMS}
        self.pending_size = 0
        self.open: set[Stream] = set()
        self._fds: dict[Stream, int] = {}
        self.decoders = {
            s: codecs.getincrementaldecoder("utf-8")(errors="replace") for s in STREAMS
        }
        self._wake = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._last_flush = float("-inf")
        self.events = 0  # output events sent (for the tests and the curious)

    def attach(self, fd: int, stream: Stream) -> None:
        """Read `fd` (the read end of the stream's pipe) as data arrives; closed at its end."""
        loop = asyncio.get_running_loop()
        os.set_blocking(fd, False)
        self.open.add(stream)
        self._fds[stream] = fd

        def readable() -> None:
            try:
                chunk = os.read(fd, READ_BYTES)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._close(stream)
            self.feed(stream, chunk)

        loop.add_reader(fd, readable)

    def _close(self, stream: Stream) -> None:
        fd = self._fds.pop(stream, None)
        if fd is not None:
            asyncio.get_running_loop().remove_reader(fd)
            os.close(fd)

    def close(self) -> None:
        """Stop reading: the pipes still open are closed (when following the run failed)."""
        for stream in list(self._fds):
            self._close(stream)

    def feed(self, stream: Stream, chunk: bytes) -> None:
        """Take a chunk read from `stream` (b'' at its end)."""
        if not chunk:
            self._add(stream, self.decoders[stream].decode(b"", final=True))
            self.open.discard(stream)
            self._wake.set()
            return
        if self.truncated:
            return  # drain until the kill closes the pipe
        room = self.limit - self.total
        self.total += len(chunk)
        if len(chunk) > room:
            chunk = chunk[: max(room, 0)]
            self.truncated = True
        text = self.decoders[stream].decode(chunk)
        if self.truncated:
            text += self.decoders[stream].decode(b"", final=True)
            text += TRUNCATION_MARKER.format(limit=human_bytes(self.limit))
            self.on_limit()
        self._add(stream, text)

    def _add(self, stream: Stream, text: str) -> None:
        if not text:
            return
        text = text.replace("\x00", "\ufffd")
        self.kept[stream].append(text)
        self.pending[stream].append(text)
        self.pending_size += len(text)
        if self.pending_size >= FLUSH_BYTES or self.truncated:
            self._wake.set()
        elif self._timer is None:
            quiet = time.monotonic() - self._last_flush > QUIET_SECONDS
            delay = FIRST_FLUSH_SECONDS if quiet else STEADY_FLUSH_SECONDS
            self._timer = asyncio.get_running_loop().call_later(delay, self._wake.set)

    async def run(self) -> None:
        """Send what is pending whenever it is due, until every stream has ended and all it
        printed has been sent."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self._flush()
            if not self.open:
                await self._flush()  # anything that came while the last flush was sent
                return

    async def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._last_flush = time.monotonic()
        batches = {s: "".join(self.pending[s]) for s in STREAMS}
        self.pending = {s: [] for s in STREAMS}
        self.pending_size = 0
        for stream, text in batches.items():
            if text and not self.client_gone:
                try:
                    self.events += 1
                    await self.emit(Output(stream, text))
                except ConnectionError:
                    # Keep draining the pipes all the same: a reader that stopped here would
                    # leave the code blocked on a full pipe, and the clean-up waiting on it.
                    self.client_gone = True

    def text(self, stream: Stream) -> str:
        return "".join(self.kept[stream])

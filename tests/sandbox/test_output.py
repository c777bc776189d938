"""Output coalescing and NUL replacement, on their own: chunks fed as the pipes would hand them
over, events collected as the client would get them. No jail needed."""

from __future__ import annotations

import asyncio
import os
import time

from sandbox.output import FIRST_FLUSH_SECONDS, FLUSH_BYTES, OutputStreams
from sandbox.protocol import Event, Output
from tests.support.aio import run_async


class Client:
    def __init__(self) -> None:
        self.events: list[tuple[float, Output]] = []

    async def emit(self, event: Event) -> None:
        assert isinstance(event, Output)
        self.events.append((time.monotonic(), event))

    def text(self, stream: str) -> str:
        return "".join(e.data for _, e in self.events if e.stream == stream)


def test_a_tight_print_loop_becomes_a_few_events_that_add_up_to_the_result() -> None:
    client = Client()

    async def scenario() -> OutputStreams:
        output = OutputStreams(1 << 20, client.emit, lambda: None)
        output.open = {"stdout", "stderr"}
        flusher = asyncio.create_task(output.run())
        for i in range(100_000):  # one line per read, as a line-buffered print loop gives
            output.feed("stdout", f"{i}\n".encode())
            if i % 1000 == 0:
                await asyncio.sleep(0)
        output.feed("stdout", b"")
        output.feed("stderr", b"")
        await flusher
        return output

    output = run_async(scenario())
    expected = "".join(f"{i}\n" for i in range(100_000))
    assert output.text("stdout") == expected == client.text("stdout")
    stdout_events = [e for _, e in client.events if e.stream == "stdout"]
    assert len(stdout_events) <= len(expected) // FLUSH_BYTES + 2


def test_small_output_is_sent_within_the_first_flush_delay() -> None:
    client = Client()

    async def scenario() -> float:
        output = OutputStreams(1 << 20, client.emit, lambda: None)
        output.open = {"stdout"}
        flusher = asyncio.create_task(output.run())
        await asyncio.sleep(0.05)
        printed = time.monotonic()
        output.feed("stdout", b"epoch 1: loss 0.3\n")
        while not client.events:
            await asyncio.sleep(0.005)
        output.feed("stdout", b"")
        await flusher
        return printed

    printed = run_async(scenario())
    waited = client.events[0][0] - printed
    assert FIRST_FLUSH_SECONDS * 0.8 <= waited < FIRST_FLUSH_SECONDS + 0.1
    assert client.text("stdout") == "epoch 1: loss 0.3\n"


def test_nul_bytes_become_replacement_characters_in_events_and_result() -> None:
    client = Client()

    async def scenario() -> OutputStreams:
        output = OutputStreams(1 << 20, client.emit, lambda: None)
        r, w = os.pipe()
        output.attach(r, "stderr")
        os.write(w, b"a\x00b\xff\n")
        os.close(w)
        output.feed("stdout", b"")
        await output.run()
        return output

    output = run_async(scenario())
    assert output.text("stderr") == "a\ufffdb\ufffd\n" == client.text("stderr")


def test_output_past_the_limit_is_cut_with_a_marker_and_stops_the_run() -> None:
    client = Client()
    stopped: list[bool] = []

    async def scenario() -> OutputStreams:
        output = OutputStreams(1024, client.emit, lambda: stopped.append(True))
        output.open = {"stdout"}
        flusher = asyncio.create_task(output.run())
        for _ in range(100):
            output.feed("stdout", b"x" * 100)
        output.feed("stdout", b"")
        await flusher
        return output

    output = run_async(scenario())
    assert stopped == [True] and output.truncated
    assert output.text("stdout").startswith("x" * 1024 + "\n[output truncated")
    assert client.text("stdout") == output.text("stdout")

"""A run queue with no worker behind it: each run plays a script of events. For tests of
everything around the sandbox (submission, limits, streams, ownership, practice counting),
which then need neither root nor cgroups; the real worker has tests of its own.

The default script understands a few lines of the code it is given:
    print('text')     prints text (string literals only)
    # fake: hold      waits until the run is cancelled, then ends `killed`
    # fake: busy      the queue is full: Busy, then a `rejected` result
    # fake: error     ends with verdict `error` and exit code 1
Anything else ends `ok`."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable

from app.runqueue.base import InProcessQueue, RunObserver
from sandbox.protocol import (
    Busy,
    Event,
    Finished,
    Output,
    RunRequest,
    RunResult,
    Started,
    Verdict,
    WorkerState,
    WorkerStatus,
)

FAKE_DEVICE = "Fake CPU (scripted runs)"
Script = Callable[[RunRequest, asyncio.Event], AsyncIterator[Event]]


async def default_script(request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
    code = request.code
    if "# fake: busy" in code:
        yield Busy(retry_after=5)
        detail = "The queue is full; try again in a few seconds."
        yield Finished(RunResult.refused(request.id, Verdict.REJECTED, detail, backend="cpu"))
        return
    yield Started("cpu", FAKE_DEVICE)
    stdout = "".join(f"{text}\n" for text in re.findall(r"print\('([^'\\]*)'\)", code))
    if stdout:
        yield Output("stdout", stdout)
    verdict, detail = Verdict.OK, ""
    exit_code: int | None = 0
    if "# fake: hold" in code:
        await cancel.wait()
        verdict, exit_code, detail = Verdict.KILLED, None, "Cancelled."
    elif "# fake: error" in code:
        verdict, exit_code, detail = Verdict.ERROR, 1, "The program exited with status 1."
    result = RunResult(
        id=request.id,
        verdict=verdict,
        exit_code=exit_code,
        stdout=stdout,
        stderr="",
        wall_ms=1,
        backend="cpu",
        device=FAKE_DEVICE,
        detail=detail,
    )
    yield Finished(result)


class FakeRunQueue(InProcessQueue):
    """Plays `script` for every run; reports `state` as the worker's."""

    def __init__(
        self,
        observer: RunObserver,
        *,
        script: Script = default_script,
        state: WorkerState = WorkerState.READY,
        linger_seconds: float = 1.0,
    ) -> None:
        super().__init__(observer, linger_seconds=linger_seconds)
        self.script = script
        self.state = state
        self.gpu: str | None = None  # a GPU's name: the status then offers cuda too
        self.submitted: list[RunRequest] = []

    def source(self, request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        self.submitted.append(request)
        return self.script(request, cancel)

    async def status(self) -> WorkerStatus:
        if self.state is not WorkerState.READY:
            detail = "starting: loading PyTorch" if self.state is WorkerState.STARTING else "off"
            return WorkerStatus(self.state, [], None, {}, detail)
        devices = {"cpu": FAKE_DEVICE} | ({"cuda": self.gpu} if self.gpu else {})
        absent = {} if self.gpu else {"cuda": "Scripted runs have no GPU."}
        return WorkerStatus(
            WorkerState.READY,
            list(devices),
            self.gpu or FAKE_DEVICE,
            devices,
            "ready",
            absent=absent,
        )

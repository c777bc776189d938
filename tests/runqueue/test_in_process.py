"""The in-process run queue (app/runqueue/base.py), through its fake adapter: every run ends
with one result that the observer hears of, watchers see every event from the start, a
cancel stops a held run, and a worker that cannot be reached is a refusal, not a hang."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from app.runqueue import QueueRefused
from app.runqueue.base import WorkerUnreachable
from app.runqueue.fake import FakeRunQueue
from sandbox.protocol import Event, Finished, Output, RunRequest, RunResult, Started, Verdict
from tests.support.aio import run_async


class Recorder:
    """An observer that remembers what it was told."""

    def __init__(self) -> None:
        self.starts: list[str] = []
        self.ends: list[tuple[str, Verdict]] = []

    async def started(
        self, run_id: str, backend: str, device: str, attempt: int = 1, delivery: str = ""
    ) -> bool:
        self.starts.append(run_id)
        return True

    async def unstarted(self, run_id: str, delivery: str) -> bool:
        return False

    async def finished(self, run_id: str, result: RunResult, attempt: int | None = None) -> bool:
        self.ends.append((run_id, result.verdict))
        return True


async def collect(events: AsyncIterator[tuple[str, Event]] | None) -> list[Event]:
    assert events is not None
    return [e async for _, e in events]


def test_a_run_is_observed_and_its_events_replay_to_a_late_watcher() -> None:
    async def scenario() -> None:
        recorder = Recorder()
        queue = FakeRunQueue(recorder, linger_seconds=0.2)
        await queue.submit(RunRequest(id="r1", code="print('hi')"))
        events = await collect(queue.events("r1"))
        assert isinstance(events[0], Started) and events[1] == Output("stdout", "hi\n")
        assert isinstance(events[-1], Finished) and events[-1].result.verdict is Verdict.OK
        assert recorder.starts == ["r1"] and recorder.ends == [("r1", Verdict.OK)]
        again = await collect(queue.events("r1"))  # a second watcher: the same, from the start
        assert again == events
        await asyncio.sleep(0.3)
        assert queue.events("r1") is None  # gone after lingering; the database has it
        await queue.close()

    run_async(scenario())


def test_a_watcher_resumes_after_the_last_event_it_saw() -> None:
    async def scenario() -> None:
        queue = FakeRunQueue(Recorder(), linger_seconds=0.2)
        await queue.submit(RunRequest(id="r2", code="print('a')\nprint('b')"))
        live = queue.events("r2")
        assert live is not None
        entries = [entry async for entry in live]
        assert [i for i, _ in entries] == [str(n) for n in range(1, len(entries) + 1)]
        resumed = queue.events("r2", after=entries[0][0])
        assert resumed is not None
        assert [entry async for entry in resumed] == entries[1:]
        past_the_end = queue.events("r2", after="99")
        assert past_the_end is not None
        assert [entry async for entry in past_the_end] == []  # ends, rather than waits
        await queue.close()

    run_async(scenario())


def test_a_held_run_ends_killed_when_cancelled() -> None:
    async def scenario() -> None:
        recorder = Recorder()
        queue = FakeRunQueue(recorder, linger_seconds=0)
        await queue.submit(RunRequest(id="held", code="# fake: hold"))
        watcher = asyncio.create_task(collect(queue.events("held")))
        await asyncio.sleep(0.05)
        assert not watcher.done()
        await queue.cancel("held")
        events = await watcher
        assert isinstance(events[-1], Finished) and events[-1].result.verdict is Verdict.KILLED
        await queue.close()

    run_async(scenario())


def test_a_full_queue_is_refused_with_its_retry_after() -> None:
    async def scenario() -> None:
        recorder = Recorder()
        queue = FakeRunQueue(recorder, linger_seconds=0)
        with pytest.raises(QueueRefused) as refused:
            await queue.submit(RunRequest(id="busy", code="# fake: busy"))
        assert refused.value.retry_after_seconds == 5
        await asyncio.sleep(0.01)
        assert recorder.ends == [("busy", Verdict.REJECTED)]
        await queue.close()

    run_async(scenario())


def test_an_unreachable_worker_is_refused_and_the_run_ends_internal_error() -> None:
    async def unreachable(request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        raise WorkerUnreachable("the sandbox worker is not running")
        yield  # pragma: no cover  (makes this an async generator)

    async def scenario() -> None:
        recorder = Recorder()
        queue = FakeRunQueue(recorder, script=unreachable, linger_seconds=0)
        with pytest.raises(QueueRefused, match="not running"):
            await queue.submit(RunRequest(id="gone", code="print('x')"))
        await asyncio.sleep(0.01)
        assert recorder.ends == [("gone", Verdict.INTERNAL_ERROR)]
        await queue.close()

    run_async(scenario())


def test_a_bug_in_the_source_still_ends_the_run_for_its_watchers() -> None:
    async def broken(request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        yield Started("cpu", "x")
        raise RuntimeError("a bug")

    async def scenario() -> None:
        recorder = Recorder()
        queue = FakeRunQueue(recorder, script=broken, linger_seconds=0.1)
        await queue.submit(RunRequest(id="bug", code=""))
        events = await collect(queue.events("bug"))
        assert isinstance(events[-1], Finished)
        assert events[-1].result.verdict is Verdict.INTERNAL_ERROR
        await queue.close()

    run_async(scenario())

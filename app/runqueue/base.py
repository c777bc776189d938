"""The run-queue contract, and the in-process fan-out its one-machine adapters share."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Protocol

from app.runqueue.worker_socket import WorkerUnreachable
from sandbox.protocol import (
    Busy,
    Event,
    Finished,
    RunRequest,
    RunResult,
    Started,
    Verdict,
    WorkerStatus,
)

__all__ = ["InProcessQueue", "QueueRefused", "RunObserver", "RunQueue", "WorkerUnreachable"]
log = logging.getLogger(__name__)
ACCEPT_TIMEOUT_SECONDS = 10
EventEntry = tuple[str, Event]  # an event and its id, which a reconnecting watcher resumes after
LINGER_SECONDS = 30.0  # a finished run's live events stay for late watchers this long


class QueueRefused(Exception):
    """No worker will take the run now: its queue is full, or none can be reached."""

    def __init__(self, detail: str, retry_after_seconds: int) -> None:
        super().__init__(detail)
        self.detail = detail
        self.retry_after_seconds = retry_after_seconds


class RunObserver(Protocol):
    """Told of every run's start and outcome, whether or not anyone watches it (the app
    records them in the database)."""

    async def started(
        self, run_id: str, backend: str, device: str, attempt: int = 1, delivery: str = ""
    ) -> bool:
        """Record that delivery `attempt` started the run; False when the run is no longer
        waiting (another delivery started it, or it ended): that delivery must stop. A
        delivery named by `delivery` that started it hears True again."""
        ...

    async def unstarted(self, run_id: str, delivery: str) -> bool:
        """Undo the start `delivery` made, whose code never reached a worker: the run waits
        for its next delivery. False when that delivery does not hold the run."""
        ...

    async def finished(self, run_id: str, result: RunResult, attempt: int | None = None) -> bool:
        """Record the outcome, unless the run has ended already or (given `attempt`) another
        delivery started it; whether it was recorded."""
        ...


class RunQueue(Protocol):
    async def start(self) -> None:
        """Begin whatever the queue does in the background (called once the app starts)."""
        ...

    async def submit(self, request: RunRequest) -> None:
        """Hand the run to a worker; return once one has accepted it (queued or started).
        QueueRefused when none will."""
        ...

    def events(self, run_id: str, after: str | None = None) -> AsyncIterator[EventEntry] | None:
        """The run's events with their ids, live, from its start or after the event whose id
        is `after`, ending with Finished; None when this queue is not carrying the run (it
        ended long ago, or another process drives it). An iterator that ends without
        Finished lost track of the run: the database has its outcome."""
        ...

    async def cancel(self, run_id: str) -> None:
        """Ask the worker to stop the run; it ends with verdict `killed`. QueueRefused when
        the ask cannot be passed on now."""
        ...

    async def status(self) -> WorkerStatus: ...

    async def workers(self) -> dict[str, int]:
        """Live workers per pool (cpu, cuda), for /metrics."""
        ...

    async def close(self) -> None: ...


@dataclass
class LiveRun:
    """The events of a run in progress, for whoever watches it."""

    events: list[Event] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    cancel: asyncio.Event = field(default_factory=asyncio.Event)

    async def add(self, event: Event) -> None:
        async with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    async def follow(self, after: str | None = None) -> AsyncIterator[EventEntry]:
        """The events after the one numbered `after` (1 is the first); from the start when
        it is not such a number."""
        seen = int(after) if after and after.isdigit() else 0
        while True:
            async with self.changed:
                while seen >= len(self.events):
                    if self.events and isinstance(self.events[-1], Finished):
                        return  # resumed after the end: nothing more will come
                    await self.changed.wait()
                batch = self.events[seen:]
            for event in batch:
                seen += 1
                yield str(seen), event
                if isinstance(event, Finished):
                    return


@dataclass(frozen=True)
class _Unreachable:
    detail: str


class InProcessQueue:
    """Drives each run in a task of this process and fans its events out to watchers.
    Adapters provide `source`: the run's events as a worker produces them."""

    def __init__(self, observer: RunObserver, *, linger_seconds: float = LINGER_SECONDS) -> None:
        self.observer = observer
        self.linger_seconds = linger_seconds
        self.live: dict[str, LiveRun] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    def source(self, request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        raise NotImplementedError

    async def submit(self, request: RunRequest) -> None:
        live = self.live[request.id] = LiveRun()
        accepted: asyncio.Future[Event | _Unreachable] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._drive(request, live, accepted))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        first = await asyncio.wait_for(asyncio.shield(accepted), ACCEPT_TIMEOUT_SECONDS)
        if isinstance(first, Busy):
            raise QueueRefused(
                "The code runners are all busy; try again in a few seconds.", first.retry_after
            )
        if isinstance(first, _Unreachable):
            raise QueueRefused(first.detail, 30)

    async def _drive(
        self,
        request: RunRequest,
        live: LiveRun,
        accepted: asyncio.Future[Event | _Unreachable],
    ) -> None:
        def accept(first: Event | _Unreachable) -> None:
            if not accepted.done():
                accepted.set_result(first)

        async def end(detail: str) -> None:
            result = RunResult.refused(request.id, Verdict.INTERNAL_ERROR, detail)
            await self.observer.finished(request.id, result)
            await live.add(Finished(result))

        try:
            try:
                async for event in self.source(request, live.cancel):
                    accept(event)
                    if isinstance(event, Started):
                        await self.observer.started(request.id, event.backend, event.device)
                    elif isinstance(event, Finished):
                        await self.observer.finished(request.id, event.result)
                    await live.add(event)
            except WorkerUnreachable as exc:
                detail = f"Code cannot run right now: {exc}."
                accept(_Unreachable(detail))
                await end(detail)
        except Exception:  # a bug here must not leave watchers waiting forever
            log.exception("run %s failed in the app", request.id)
            accept(_Unreachable("Code cannot run right now: an internal error."))
            await end("The app lost track of this run.")
        finally:
            # Late watchers read the stored run; keep the live copy a little for stragglers,
            # but not when the queue is closing (a cancel that cut the run short would
            # otherwise hold the server's shutdown for the whole linger).
            task = asyncio.current_task()
            if task is None or not task.cancelling():
                await asyncio.sleep(self.linger_seconds)
            self.live.pop(request.id, None)

    async def start(self) -> None:
        """Nothing runs in the background: each run's task starts with it."""

    def events(self, run_id: str, after: str | None = None) -> AsyncIterator[EventEntry] | None:
        live = self.live.get(run_id)
        return live.follow(after) if live is not None else None

    async def cancel(self, run_id: str) -> None:
        live = self.live.get(run_id)
        if live is not None:
            live.cancel.set()

    async def status(self) -> WorkerStatus:
        raise NotImplementedError  # each adapter asks its worker

    async def workers(self) -> dict[str, int]:
        """One machine: its one worker, for each backend it runs code on now."""
        status = await self.status()
        return {backend: int(status.available) for backend in status.backends}

    async def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self.tasks, return_exceptions=True)

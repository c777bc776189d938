"""One agent: takes its pool's jobs while its worker has free slots, runs each through the
worker, and keeps its heartbeat and its runs' leases fresh. Jobs come owners in turn, and
no owner's runs hold more of its slots than `owner_cap` allows (fleet/jobs.py's `take`).

What a delivery does depends on what Redis says of its run (fleet/jobs.py's `begin`):
  - cancelled before it started: it ends `killed`, never handed to the worker;
  - handed to a worker by an earlier delivery whose agent is gone: it ends `internal_error`
    ("the machine running it stopped; it was not run again"), since the code may be what
    killed that machine;
  - delivered more than MAX_DELIVERIES times without starting: it ends `internal_error`;
  - held by another live delivery: a duplicate, dropped;
  - else it asks the database to start it (fleet/results.py's `ask_to_start`), and hands
    it to the worker only if the database says this delivery is the one. A worker that
    cannot be reached at all undoes the start (in the database, then in Redis): the job is
    delivered again after the lease (once: see above)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import socket
from collections import Counter
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.agent import upkeep
from app.agent.executors import Executor
from app.agent.metrics import AgentMetrics
from app.agent.upkeep import Held
from app.logs import bound
from app.runqueue.fleet import (
    CANCELLED_WAITING,
    MACHINE_STOPPED,
    NEVER_STARTED,
    events,
    jobs,
    keys,
    liveness,
    results,
    waiting,
)
from app.runqueue.fleet.jobs import Begin, Delivery
from app.runqueue.fleet.queue import FleetTiming
from app.runqueue.worker_socket import WorkerLost, WorkerUnreachable
from sandbox.protocol import (
    Event,
    Finished,
    RunRequest,
    RunResult,
    Started,
    Verdict,
    WorkerStatus,
    owner_cap,
)

log = logging.getLogger("backprop.agent")
MAX_DELIVERIES = 2  # the first, and one more when the first never started the run
UNREPORTED_SLOTS = 2  # taken at once when neither the worker nor the command line says
HELD_BACK_SECONDS = 0.25  # how often jobs are looked for while only capped owners' wait


class Agent:
    def __init__(
        self,
        redis: Redis,
        executor: Executor,
        *,
        pool: str,
        slots: int | None,
        timing: FleetTiming,
        metrics: AgentMetrics | None = None,
    ) -> None:
        self.redis = redis
        self.executor = executor
        self.pool = pool
        self.slots = slots  # at most this many at once; None: as many as the worker runs
        self.timing = timing
        self.metrics = metrics or AgentMetrics()
        self.agent_id = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.worker = WorkerStatus.unavailable("not asked yet")
        self.held: dict[str, Held] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.owners: dict[asyncio.Task[None], str] = {}  # whose turn each task's job took
        self.changed = asyncio.Event()  # a slot freed, or the worker's state changed
        self.stopping = False  # ends the helper loops, should a cancel be lost in a Redis call

    @property
    def ready(self) -> bool:
        return self.worker.available and self.pool in self.worker.backends

    @property
    def capacity(self) -> int:
        """How many runs it takes at once: as many as the worker runs on this pool, fewer if
        `slots` says so. Never more: a run waiting in the worker's own queue has been handed
        over, so an agent death would end it `internal_error` instead of delivering it again."""
        runs_at_once = self.worker.slots.get(self.pool)
        if runs_at_once is None:  # a worker that does not say (or none yet)
            return self.slots or UNREPORTED_SLOTS
        return min(runs_at_once, self.slots) if self.slots else runs_at_once

    async def run(self, stop: asyncio.Event) -> None:
        """Take and run jobs until `stop` is set; then let the runs in hand end."""
        helpers = [
            asyncio.create_task(upkeep.beat_forever(self)),
            asyncio.create_task(upkeep.watch(self)),
        ]
        try:
            await self._take_until(stop)
            if self.tasks:
                await asyncio.wait(self.tasks)
        finally:
            self.stopping = True
            for helper in helpers:
                helper.cancel()
            await asyncio.wait(helpers, timeout=self.timing.heartbeat_seconds + 1)
            with contextlib.suppress(RedisError, OSError):
                await liveness.withdraw(self.redis, self.info())

    async def _take_until(self, stop: asyncio.Event) -> None:
        lease_ms, block_ms = self.timing.lease_ms, int(self.timing.heartbeat_seconds * 1000)
        while not stop.is_set():
            free = self.capacity - len(self.tasks)
            if free <= 0 or not self.ready:
                await self._wait_for_a_change()
                continue
            try:
                found = await jobs.reclaim(self.redis, self.pool, self.agent_id, free, lease_ms)
                if not found:
                    taken = await waiting.take(
                        self.redis,
                        self.pool,
                        self.agent_id,
                        free,
                        cap=owner_cap(self.capacity),
                        held=Counter(self.owners.values()),
                    )
                    found = taken.deliveries
                    if not found and taken.held_back:
                        # What waits is owners' who hold their share here already: look
                        # again when one of their runs ends, or soon for a newcomer's job
                        # (its bell woke another agent, or nobody).
                        await self._wait_for_a_change(HELD_BACK_SECONDS)
                    elif not found:
                        await waiting.wait_for_jobs(self.redis, self.pool, block_ms)
            except (RedisError, OSError) as exc:
                log.warning("taking jobs from Redis failed: %s", exc)
                await asyncio.sleep(self.timing.heartbeat_seconds)
                continue
            for delivery in found:
                # The task copies the context: each of its log lines carries the run's id.
                with bound(run_id=delivery.run_id):
                    task = asyncio.create_task(self._handle(delivery))
                self.tasks.add(task)
                self.owners[task] = delivery.owner
                task.add_done_callback(self._done)

    async def _wait_for_a_change(self, seconds: float | None = None) -> None:
        """Until a slot frees or the worker's state changes; `seconds` (a heartbeat) at most."""
        self.changed.clear()
        limit = min(seconds or self.timing.heartbeat_seconds, self.timing.heartbeat_seconds)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.changed.wait(), limit)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        self.owners.pop(task, None)
        self.changed.set()

    async def _handle(self, delivery: Delivery) -> None:
        self.metrics.taken.inc()
        try:
            request = RunRequest.from_json(json.loads(delivery.request))
        except ValueError:
            request = RunResult.refused(delivery.run_id, Verdict.REJECTED, "A malformed job.")
        if isinstance(request, RunResult):
            await self._end(delivery, request, None)
            return
        try:
            may_start = delivery.deliveries <= MAX_DELIVERIES
            begun = await jobs.begin(
                self.redis, delivery, self.timing.lease_ms, may_start=may_start
            )
        except (RedisError, OSError) as exc:  # left pending: delivered again after the lease
            log.warning("run %s: could not start it: %s", delivery.run_id, exc)
            return
        log.info("run %s, delivery %d: %s", delivery.run_id, delivery.deliveries, begun.value)
        if begun is Begin.BEGUN:
            await self._execute(delivery, request)
            return
        if begun is Begin.CLAIMED:
            await self._reliably(lambda: jobs.done(self.redis, delivery))
            return
        verdict, detail = {
            Begin.CANCELLED: (Verdict.KILLED, CANCELLED_WAITING),
            Begin.BEGAN: (Verdict.INTERNAL_ERROR, MACHINE_STOPPED),
            Begin.EXHAUSTED: (Verdict.INTERNAL_ERROR, NEVER_STARTED),
        }[begun]
        result = RunResult.refused(delivery.run_id, verdict, detail, backend=self.pool)
        await self._end(delivery, result, None)

    async def _execute(self, delivery: Delivery, request: RunRequest) -> None:
        held = self.held[delivery.token] = Held(delivery)  # its lease renewed from now on
        self.metrics.running.inc()
        try:
            every = self.timing.heartbeat_seconds
            start = await results.ask_to_start(
                self.redis, delivery, self.pool, every=every, cancel=held.cancel
            )
            if not start:  # another delivery started it, it ended, or it was cancelled
                await self._let_go(delivery, request.id)
                return
            result = await self._follow(delivery, request, held.cancel)
        except WorkerUnreachable as exc:
            log.warning("run %s not handed over (%s): it will be delivered again", request.id, exc)
            self.worker = WorkerStatus.unavailable(str(exc))
            await results.give_back(self.redis, delivery, every=self.timing.heartbeat_seconds)
            await self._reliably(lambda: jobs.release(self.redis, delivery))
            return
        finally:
            self.held.pop(delivery.token, None)
            self.metrics.running.dec()
        await self._end(delivery, result, delivery.deliveries)
        if result.wall_ms:
            with contextlib.suppress(RedisError, OSError):
                await liveness.record_duration(self.redis, self.pool, result.wall_ms / 1000)

    async def _let_go(self, delivery: Delivery, run_id: str) -> None:
        """A delivery the database did not start: its code never reached the worker. A run
        cancelled meanwhile ends `killed` here (the cancel found it begun, so left it to
        this agent); otherwise another delivery has it, or it ended."""
        log.info("run %s, delivery %s: not started here", run_id, delivery.token)
        cancelled = False
        with contextlib.suppress(RedisError, OSError):
            cancelled = bool(await self.redis.exists(keys.cancel(run_id)))
        if cancelled:
            result = RunResult.refused(run_id, Verdict.KILLED, CANCELLED_WAITING, backend=self.pool)
            await self._reliably(lambda: results.report_finished(self.redis, result, None))
        await self._reliably(lambda: jobs.done(self.redis, delivery))

    async def _follow(
        self, delivery: Delivery, request: RunRequest, cancel: asyncio.Event
    ) -> RunResult:
        """The run's outcome; its events go to Redis as they come (best effort: live output
        may be lost while Redis is down, the outcome never)."""
        try:
            async for event in self.executor.run(request, cancel):
                if isinstance(event, Finished):
                    return event.result
                if isinstance(event, Started):
                    started = self._report_started(delivery, event)
                    await self._reliably(started, tries=3)
                await self._publish(request.id, event)
        except WorkerLost as exc:
            log.warning("run %s: the worker was lost mid-run: %s", request.id, exc)
            detail = "The sandbox worker stopped during this run; it was not run again."
            return RunResult.refused(request.id, Verdict.INTERNAL_ERROR, detail, backend=self.pool)
        raise WorkerLost("the run's events ended without a result")

    def _report_started(self, delivery: Delivery, event: Started) -> Callable[[], Awaitable[None]]:
        return lambda: results.report_started(
            self.redis,
            delivery.run_id,
            delivery.deliveries,
            delivery.token,
            event.backend,
            event.device,
        )

    async def _publish(self, run_id: str, event: Event) -> None:
        try:
            await events.publish(self.redis, run_id, event)
        except (RedisError, OSError) as exc:
            log.warning("run %s: an event was lost: %s", run_id, exc)

    async def _end(self, delivery: Delivery, result: RunResult, attempt: int | None) -> None:
        """Report the outcome (until Redis takes it), then let the job go."""
        await self._reliably(lambda: results.report_finished(self.redis, result, attempt))
        await self._reliably(lambda: jobs.done(self.redis, delivery))
        self.metrics.finished.labels(result.verdict.value).inc()

    async def _reliably(self, step: Callable[[], Awaitable[object]], tries: int = 0) -> None:
        await upkeep.reliably(step, self.timing.heartbeat_seconds, tries)

    def info(self) -> liveness.AgentInfo:
        return liveness.AgentInfo(
            agent_id=self.agent_id,
            pool=self.pool,
            slots=self.capacity,
            free=max(0, self.capacity - len(self.tasks)),
            device=self.worker.devices.get(self.pool, ""),
            ready=self.ready,
        )

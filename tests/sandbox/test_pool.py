"""A pool's queue estimate: from how long its recent runs held a slot."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sandbox.pool import RECENT_RUNS, Pool
from sandbox.protocol import Event, Queued
from tests.support.aio import run_async


def _pool(slots: int) -> Pool:
    return Pool("cpu", "test cpu", slots, max_queue=8, first_uid=61000, state_dir=Path("/nowhere"))


def test_no_estimate_before_any_run_has_ended() -> None:
    assert _pool(2).estimate(1) is None


def test_the_estimate_is_the_median_run_times_the_rounds_ahead() -> None:
    pool = _pool(2)
    for seconds in (2.0, 4.0, 100.0):  # one very long run does not move the median
        pool.ran_for(seconds)
    assert pool.estimate(1) == 4.0  # both slots busy: one round of runs ahead
    assert pool.estimate(3) == 8.0
    for _ in range(RECENT_RUNS):
        pool.ran_for(0.1)
    assert pool.estimate(1) == 1.0, "only recent runs count, and never under a second"


def test_waiting_runs_are_told_their_place_and_estimate() -> None:
    async def scenario() -> list[Event]:
        pool = _pool(1)
        pool.ran_for(3.0)
        told: list[Event] = []

        async def emit(event: Event) -> None:
            told.append(event)

        slot = await pool.acquire(emit)
        waiter = asyncio.create_task(pool.acquire(emit))
        await asyncio.sleep(0)
        pool.release(slot)
        assert await waiter == slot
        return told

    assert run_async(scenario()) == [Queued(1, 3.0)]

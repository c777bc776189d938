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


class Starts:
    """Runs acquiring one pool's slots as tasks, and the order they were handed a slot."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.order: list[str] = []
        self.slots: dict[str, int] = {}
        self.told: dict[str, list[Event]] = {}

    async def ask(self, name: str, owner: str | None) -> asyncio.Task[None]:
        told = self.told[name] = []

        async def emit(event: Event) -> None:
            told.append(event)

        async def acquire() -> None:
            self.slots[name] = await self.pool.acquire(emit, owner)
            self.order.append(name)

        task = asyncio.create_task(acquire())
        await asyncio.sleep(0)  # arrive in the order asked
        return task

    async def end(self, name: str) -> None:
        self.pool.release(self.slots.pop(name))
        await asyncio.sleep(0)


def test_an_owner_holds_at_most_all_but_one_slot_and_a_newcomer_takes_the_last() -> None:
    async def scenario() -> list[str]:
        starts = Starts(_pool(2))
        await starts.ask("a1", "a")
        await starts.ask("a2", "a")  # a slot is free, but not for a second run of a's
        assert starts.order == ["a1"] and starts.pool.free_slots == [1]
        await starts.ask("b1", "b")  # the newcomer starts at once
        assert starts.order == ["a1", "b1"]
        await starts.end("a1")
        return starts.order

    assert run_async(scenario()) == ["a1", "b1", "a2"]


def test_the_next_slot_goes_to_the_owner_holding_fewest() -> None:
    async def scenario() -> list[str]:
        starts = Starts(_pool(3))  # each owner may hold two
        for name in ("a1", "a2", "b1"):
            await starts.ask(name, name[0])
        await starts.ask("a3", "a")
        await starts.ask("c1", "c")
        await starts.ask("b2", "b")
        await starts.end("a1")  # a holds one, b one, c none: c first, though it came later
        await starts.end("b1")  # a holds one, b none
        return starts.order

    assert run_async(scenario()) == ["a1", "a2", "b1", "c1", "b2"]


def test_owners_take_turns_whatever_order_their_runs_came_in() -> None:
    async def scenario() -> list[str]:
        starts = Starts(_pool(1))
        await starts.ask("a1", "a")
        for name in ("a2", "a3", "a4", "b1", "c1", "b2"):
            await starts.ask(name, name[0])
        for name in ("a1", "b1", "c1", "a2", "b2", "a3"):
            await starts.end(name)
        return starts.order

    assert run_async(scenario()) == ["a1", "b1", "c1", "a2", "b2", "a3", "a4"]


def test_runs_without_an_owner_are_first_come_first_served_and_never_capped() -> None:
    async def scenario() -> list[str]:
        starts = Starts(_pool(2))
        for name in ("x1", "x2", "x3", "x4"):
            await starts.ask(name, None)
        assert starts.order == ["x1", "x2"]  # no owner: nothing to cap
        await starts.end("x2")
        await starts.end("x1")
        return starts.order

    assert run_async(scenario()) == ["x1", "x2", "x3", "x4"]


def test_waiting_runs_are_told_their_place_in_the_fair_order() -> None:
    async def scenario() -> dict[str, list[Event]]:
        starts = Starts(_pool(1))
        await starts.ask("a1", "a")
        for name in ("a2", "a3", "b1"):
            await starts.ask(name, name[0])
        return starts.told

    told = run_async(scenario())
    assert told["a1"] == []  # started at once
    assert told["b1"] == [Queued(1, None)]  # a holds the slot: b's run goes before a's next
    assert told["a2"][-1] == Queued(2, None) and told["a3"][-1] == Queued(3, None)


def test_a_run_that_gives_up_waiting_leaves_the_queue_and_its_turn_passes_on() -> None:
    async def scenario() -> tuple[list[str], dict[str, int]]:
        starts = Starts(_pool(1))
        await starts.ask("a1", "a")
        quitter = await starts.ask("b1", "b")
        await starts.ask("c1", "c")
        quitter.cancel()
        await asyncio.sleep(0)
        await starts.end("a1")
        await starts.end("c1")
        return starts.order, dict(starts.pool.turns)

    order, turns = run_async(scenario())
    assert order == ["a1", "c1"]
    assert turns == {}  # nothing waits or runs: no owner is remembered


def test_the_queue_is_full_for_a_run_that_would_wait_not_for_one_that_starts_at_once() -> None:
    async def scenario() -> None:
        pool = Pool("cpu", "test cpu", 2, max_queue=1, first_uid=61000, state_dir=Path("/x"))
        starts = Starts(pool)
        await starts.ask("a1", "a")
        assert not pool.full("a")  # a second run of a's would wait, and there is room
        await starts.ask("a2", "a")
        assert pool.full("a")  # a third would wait too, and the queue is full
        assert not pool.full("b")  # b's run takes the free slot at once
        assert not pool.full()  # so does a run without an owner

    run_async(scenario())

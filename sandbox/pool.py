"""One backend of the worker: its warm zygote, its slots and its queue of waiting runs.

The queue is fair between owners rather than first in, first out (see `Pool.acquire`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import statistics
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.protocol import Emit, Queued, owner_cap
from sandbox.warm_progress import Warming
from sandbox.zygote_client import Zygote, zygote_env

log = logging.getLogger("sandbox")

# A zygote is replaced after this many runs or seconds, whichever comes first, so that
# nothing a long life accumulates in it (memory, caches) is inherited by runs for ever.
ZYGOTE_MAX_RUNS = 500
ZYGOTE_MAX_AGE_SECONDS = 3600
RECENT_RUNS = 20  # runs a queue estimate is made from


@dataclass(eq=False)
class Waiter:
    """A run waiting for a slot: told of its place through `emit`, handed its slot
    through `future`."""

    future: asyncio.Future[int]
    emit: Emit
    owner: str  # whose turn it takes; a run sent without an owner has a key of its own
    arrived: int  # the pool's tick when it came


@dataclass
class Pool:
    """One backend: its zygote, its slots and its queue of waiting runs."""

    backend: str
    device: str
    slots: int
    max_queue: int
    first_uid: int  # slot n runs code as first_uid + n: pools never share a uid (worker.py)
    state_dir: Path
    zygote: Zygote | None = None
    # The sealed compile cache runs start from (compile_cache.py), once warmed; and in words
    # how that is going, for the status.
    compile_cache: Path | None = None
    cache_state: str = "off"
    warming: Warming | None = None  # while the compile cache is being filled
    free_slots: list[int] = field(default_factory=list)
    waiting: list[Waiter] = field(default_factory=list)  # in the order they came
    running: Counter[str] = field(default_factory=Counter)  # slots held, per owner
    holders: dict[int, str] = field(default_factory=dict)  # slot -> the owner holding it
    # Per owner with runs waiting or running: the tick it was last served (a run of its
    # started or ended), or its first waiting run's arrival if never. Ties between owners
    # holding as many slots go to the smallest: whoever waited longest since its last turn.
    turns: dict[str, int] = field(default_factory=dict)
    tick: int = 0
    # How long the last runs held a slot: what a waiting run's estimate is made from.
    recent_seconds: deque[float] = field(default_factory=lambda: deque(maxlen=RECENT_RUNS))
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        self.free_slots = list(range(self.slots))

    @property
    def cap(self) -> int:
        return owner_cap(self.slots)

    def uid(self, slot: int) -> int:
        return self.first_uid + slot

    def uids(self) -> list[int]:
        return [self.uid(slot) for slot in range(self.slots)]

    def full(self, owner: str | None = None) -> bool:
        """A new run of `owner` would have to wait (no slot free, or none it may take) and
        the queue has no room left: it is turned away."""
        starts_now = self.free_slots and (owner is None or self.running[owner] < self.cap)
        return not starts_now and len(self.waiting) >= self.max_queue

    async def ensure_zygote(self) -> Zygote:
        """The warm process, started or replaced when missing, dead, old or worn."""
        async with self.lock:
            z = self.zygote
            if z is None or not z.alive() or _worn(z):
                if z is not None:
                    log.info(
                        "replacing the %s zygote (alive=%s, runs=%d)",
                        self.backend,
                        z.alive(),
                        z.runs,
                    )
                    await asyncio.to_thread(z.stop)
                # Here, in the event loop's thread: the zygote dies when it ends (launch.py).
                fresh = Zygote(self.backend, zygote_env(self.backend), self.state_dir)
                await asyncio.to_thread(fresh.wait_ready)
                log.info("%s zygote ready in %.1f s", self.backend, fresh.warm_up_seconds)
                self.zygote = z = fresh
            return z

    async def acquire(self, emit: Emit, owner: str | None = None) -> int:
        """Wait for a slot, telling the client its place in the queue. Runs are not taken
        first come, first served but fairly by owner: the next slot goes to the waiting run
        whose owner holds fewest slots, ties taken in turn (the owner whose last start is
        oldest first), an owner's own runs in the order they came; and no owner holds more
        than `cap` slots, so one owner's runs never fill the pool."""
        self.tick += 1
        key = owner if owner is not None else f"#{self.tick}"  # an owner-less run: its own
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        waiter = Waiter(future, emit, key, self.tick)
        self.waiting.append(waiter)
        self.turns.setdefault(key, self.tick)
        if self._dispatch() and future.done():
            return future.result()  # a slot was free for it: no queue to announce
        await self._announce()
        try:
            return await future
        except asyncio.CancelledError:
            if waiter in self.waiting:
                self.waiting.remove(waiter)
                self._forget(key)
            if future.done() and not future.cancelled():
                self.release(future.result())  # handed a slot just as it gave up: pass it on
            raise

    def release(self, slot: int) -> None:
        """Free `slot` and hand free slots to the runs whose turn it is."""
        owner = self.holders.pop(slot)
        self.running[owner] -= 1
        if self.running[owner] <= 0:
            del self.running[owner]
        self.tick += 1
        self.turns[owner] = self.tick  # it has just had a turn: the others' come first
        self._forget(owner)
        self.free_slots.append(slot)
        if self._dispatch():
            asyncio.get_running_loop().create_task(self._announce())

    def next_waiter(self) -> Waiter | None:
        """The waiting run that takes the next free slot, or None when every waiting run's
        owner holds its cap already."""
        best: Waiter | None = None
        best_rank: tuple[int, int] | None = None
        for waiter in self.waiting:  # an owner's first waiting run comes first: FIFO within
            held = self.running[waiter.owner]
            if held >= self.cap:
                continue
            rank = (held, self.turns[waiter.owner])
            if best_rank is None or rank < best_rank:
                best, best_rank = waiter, rank
        return best

    def _dispatch(self) -> bool:
        """Hand free slots to the runs whose turn it is; whether any was handed."""
        handed = False
        while self.free_slots:
            waiter = self.next_waiter()
            if waiter is None:
                break
            self.waiting.remove(waiter)
            if waiter.future.done():  # cancelled while it waited
                self._forget(waiter.owner)
                continue
            slot = self.free_slots.pop(0)
            self.tick += 1
            self.holders[slot] = waiter.owner
            self.running[waiter.owner] += 1
            self.turns[waiter.owner] = self.tick
            waiter.future.set_result(slot)
            handed = True
        return handed

    def _forget(self, owner: str) -> None:
        """Drop an owner's turn once it has nothing waiting or running."""
        if owner not in self.running and not any(w.owner == owner for w in self.waiting):
            self.turns.pop(owner, None)

    def queue_order(self) -> list[Waiter]:
        """The waiting runs in the order they are expected to start if no other comes: in
        rounds, each owner's next run per round, owners in the order of their turns."""
        by_owner: dict[str, list[Waiter]] = {}
        for waiter in self.waiting:
            by_owner.setdefault(waiter.owner, []).append(waiter)
        owners = sorted(by_owner, key=lambda o: (self.running[o], self.turns[o]))
        queues = [by_owner[owner] for owner in owners]
        rounds = max(map(len, queues), default=0)
        return [runs[n] for n in range(rounds) for runs in queues if n < len(runs)]

    def ran_for(self, seconds: float) -> None:
        """A run held a slot this long."""
        self.recent_seconds.append(seconds)

    def estimate(self, position: int) -> float | None:
        """About how long until the run at `position` starts: the runs ahead of it, and the
        ones running now, each taking the median of recent runs, `slots` at a time."""
        if not self.recent_seconds:
            return None
        typical = statistics.median(self.recent_seconds)
        return round(max(1.0, math.ceil(position / self.slots) * typical), 1)

    async def _announce(self) -> None:
        """Tell every waiting run its place (1 is next) and about how long it will wait."""
        for position, waiter in enumerate(self.queue_order(), start=1):
            if not waiter.future.done():
                with contextlib.suppress(ConnectionError):
                    await waiter.emit(Queued(position, self.estimate(position)))


def _worn(zygote: Zygote) -> bool:
    return (
        zygote.runs >= ZYGOTE_MAX_RUNS
        or time.monotonic() - zygote.started_at > ZYGOTE_MAX_AGE_SECONDS
    )

"""One backend of the worker: its warm zygote, its slots and its queue of waiting runs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import statistics
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.protocol import Emit, Queued
from sandbox.zygote_client import Zygote, zygote_env

log = logging.getLogger("sandbox")

# A zygote is replaced after this many runs or seconds, whichever comes first, so that
# nothing a long life accumulates in it (memory, caches) is inherited by runs for ever.
ZYGOTE_MAX_RUNS = 500
ZYGOTE_MAX_AGE_SECONDS = 3600
RECENT_RUNS = 20  # runs a queue estimate is made from


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
    free_slots: list[int] = field(default_factory=list)
    waiting: deque[tuple[asyncio.Future[int], Emit]] = field(default_factory=deque)
    # How long the last runs held a slot: what a waiting run's estimate is made from.
    recent_seconds: deque[float] = field(default_factory=lambda: deque(maxlen=RECENT_RUNS))
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        self.free_slots = list(range(self.slots))

    def uid(self, slot: int) -> int:
        return self.first_uid + slot

    def uids(self) -> list[int]:
        return [self.uid(slot) for slot in range(self.slots)]

    def full(self) -> bool:
        """No slot free and no room left in the queue: a new run is turned away."""
        return not self.free_slots and len(self.waiting) >= self.max_queue

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

    async def acquire(self, emit: Emit) -> int:
        """Wait for a slot (FIFO), telling the client its place in the queue."""
        if self.free_slots and not self.waiting:
            return self.free_slots.pop(0)
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.waiting.append((future, emit))
        await self._announce()
        try:
            return await future
        except asyncio.CancelledError:
            with contextlib.suppress(ValueError):
                self.waiting.remove((future, emit))
            if future.done() and not future.cancelled():
                self.release(future.result())  # handed a slot just as it gave up: pass it on
            raise

    def release(self, slot: int) -> None:
        """Hand `slot` to the first run still waiting, or free it."""
        while self.waiting:
            future, _ = self.waiting.popleft()
            if not future.done():
                future.set_result(slot)
                asyncio.get_running_loop().create_task(self._announce())
                return
        self.free_slots.append(slot)

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
        for position, (future, emit) in enumerate(list(self.waiting), start=1):
            if not future.done():
                with contextlib.suppress(ConnectionError):
                    await emit(Queued(position, self.estimate(position)))


def _worn(zygote: Zygote) -> bool:
    return (
        zygote.runs >= ZYGOTE_MAX_RUNS
        or time.monotonic() - zygote.started_at > ZYGOTE_MAX_AGE_SECONDS
    )

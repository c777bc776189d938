"""A backend's compile warming while it lasts, as the runs that wait for it see it: what is
left to compile, what is being compiled, and who waits (warming.py does the warming; the pool
holds this while it goes on)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field

from sandbox.compile_cache import WarmProgram
from sandbox.runner import RunContext

HURRY_EVERY_SECONDS = 0.5  # a hurried warming run's new processes get the normal nice level


@dataclass
class Warming:
    """A backend's warming while it lasts: what is left to compile, what is being compiled,
    and who waits for it."""

    pending: list[WarmProgram]
    published: dict[str, asyncio.Event] = field(default_factory=dict)  # by code
    running: list[RunContext] = field(default_factory=list)  # the warming run, once started
    waiting: int = 0  # learners' runs waiting for a program

    def __post_init__(self) -> None:
        self.published = {key(p.code): asyncio.Event() for p in self.pending}

    def next_program(self) -> WarmProgram | None:
        return self.pending.pop(0) if self.pending else None

    def unpublished(self, code: str) -> asyncio.Event | None:
        """The event set once `code`'s graphs are published, when they are still to come."""
        event = self.published.get(key(code))
        return None if event is None or event.is_set() else event

    async def wait_for(self, event: asyncio.Event, code: str, seconds: float) -> bool:
        """Wait until `code` (a program still to come) is published, or `seconds` have
        passed: it is compiled next, and the warmer is hurried while anyone waits. Whether
        it was published."""
        for index, program in enumerate(self.pending):
            if key(program.code) == key(code):
                self.pending.insert(0, self.pending.pop(index))
                break
        self.waiting += 1
        deadline = time.monotonic() + seconds
        try:
            while not event.is_set() and (left := deadline - time.monotonic()) > 0:
                self.hurry()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), min(HURRY_EVERY_SECONDS, left))
        finally:
            self.waiting -= 1
        return event.is_set()

    def hurry(self) -> None:
        for ctx in self.running:
            if ctx.cgroup is not None:
                with contextlib.suppress(OSError):
                    ctx.cgroup.hurry()


def key(code: str) -> str:
    """A program as the worker compares it: a page's sample, whatever blank lines end it."""
    return code.strip()

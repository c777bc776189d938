"""A run's wall clock, in two phases: compiling and running.

A lab's first call of a compiled function compiles it: 8-60 s of CPU on an idle 2-core
machine, minutes of wall-clock time on a busy one (the MLP lab stopped at its 60 s limit
with 21 s of CPU used, still compiling). That is the machine's slowness, not the learner's
code. So the lab harness (backprop_lab) says on a pipe of its own, one word per line, when it
starts compiling and when it goes back to running; time spent compiling is charged first to
the compile allowance (Limits.compile_seconds) and only past it to the run's own wall-clock
limit. A run that times out is told which phase it was in.

The code reports its own phase, so a learner's code can claim to be compiling when it is
not. That buys it the allowance and nothing more: a run never lasts longer than
wall_seconds + compile_seconds, its CPU-time limit is unchanged, and past MAX_SWITCHES
reports the clock stops listening (and stays in the running phase, the stricter one).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sandbox.protocol import Limits

COMPILING = "compiling"
RUNNING = "running"
PHASES = (COMPILING, RUNNING)
PHASE_FD_ENV = "BACKPROP_PHASE_FD"  # the pipe's descriptor, in the code's environment
MAX_SWITCHES = 64  # a lab switches a few times per compare(); a flood is ignored
MAX_LINE = 32  # longer lines are not phases: dropped unread


@dataclass
class PhaseClock:
    """How much of a run's wall-clock time each phase has used."""

    wall_seconds: float
    allowance: float  # for compiling, before the run's own limit is charged
    phase: str
    since: float  # when the current phase began (time.monotonic)
    compiling_used: float = 0.0  # charged to the allowance
    running_used: float = 0.0  # charged to the run's own limit (compiling past the allowance too)
    compiling_total: float = 0.0  # every second spent compiling
    switches: int = 0

    @classmethod
    def start(cls, limits: Limits, now: float) -> PhaseClock:
        return cls(limits.wall_seconds, limits.compile_seconds, RUNNING, now)

    def switch(self, phase: str, now: float) -> bool:
        """Enter `phase` (a word the code reported); whether the phase changed."""
        if phase not in PHASES or phase == self.phase or self.switches >= MAX_SWITCHES:
            return False
        self._charge(now)
        self.switches += 1
        self.phase = phase if self.switches < MAX_SWITCHES else RUNNING
        return True

    def left(self, now: float) -> float:
        """Seconds until the run's time is up, should it stay in its phase."""
        spent = now - self.since
        own = self.wall_seconds - self.running_used
        if self.phase == COMPILING:
            return max(self.allowance - self.compiling_used, 0.0) + own - spent
        return own - spent

    def stop(self, now: float) -> None:
        """Charge the phase the run ends in, up to `now`."""
        self._charge(now)

    def timeout_detail(self) -> str:
        """Why the run stopped at its time limit, in the learner's words (after `stop`)."""
        wall = f"{self.wall_seconds:g} s"
        if self.phase == COMPILING:
            return (
                f"Stopped while compiling, after {self.compiling_total:.0f} s of it: compiling "
                f"may take up to {self.allowance:g} s beyond the run's own {wall} of wall-clock "
                "time, and both were used up. On a busy machine a first compile is slow; try "
                "again later, or compile less (a smaller model, fewer shapes)."
            )
        if self.compiling_total > 0:
            return (
                f"Stopped after {wall} of wall-clock time, the limit for a run, while running "
                f"(not counting {min(self.compiling_total, self.allowance):.0f} s of compiling, "
                "which has an allowance of its own)."
            )
        return f"Stopped after {wall} of wall-clock time, the limit for a run."

    def _charge(self, now: float) -> None:
        spent = max(now - self.since, 0.0)
        self.since = now
        if self.phase == COMPILING:
            self.compiling_total += spent
            from_allowance = min(spent, max(self.allowance - self.compiling_used, 0.0))
            self.compiling_used += from_allowance
            spent -= from_allowance
        self.running_used += spent


class PhaseLines:
    """The words the code writes to its phase pipe, line by line (from runner._read_pipe's
    queue of chunks, b'' at its end)."""

    def __init__(self, chunks: asyncio.Queue[bytes]) -> None:
        self.chunks = chunks
        self.buffer = b""
        self.overlong = False  # the line being read grew past MAX_LINE: dropped whole
        self.lines: list[str] = []
        self.ended = False

    async def next(self) -> str | None:
        """The next line; None once the pipe has closed."""
        while not self.lines:
            if self.ended:
                return None
            chunk = await self.chunks.get()
            if not chunk:
                self.ended = True
                continue
            *whole, self.buffer = (self.buffer + chunk).split(b"\n")
            if whole and self.overlong:
                whole[0], self.overlong = b"x" * (MAX_LINE + 1), False
            self.lines += [
                line.decode("ascii", "replace").strip() for line in whole if len(line) <= MAX_LINE
            ]
            if len(self.buffer) > MAX_LINE:
                self.buffer, self.overlong = b"", True  # never let one line grow without bound
        return self.lines.pop(0)

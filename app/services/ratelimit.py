"""Per-visitor limits on runs: how many at once, and how many a minute.

Kept in the web process's memory: with several replicas each enforces its own share. The
sandbox worker's queue is the shared, hard limit behind it."""

from __future__ import annotations

import math
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field


class RateLimited(Exception):
    """Too many runs; `retry_after_seconds` says when to try again."""

    def __init__(self, message: str, retry_after_seconds: int) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after_seconds = retry_after_seconds


@dataclass
class RunLimiter:
    per_minute: int = 20
    concurrent: int = 2
    window_seconds: float = 60.0
    _starts: dict[str, deque[float]] = field(default_factory=lambda: defaultdict(deque))
    _active: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def admit(self, key: str) -> None:
        """Count a new run for `key`, or raise RateLimited."""
        now = time.monotonic()
        starts = self._starts[key]
        while starts and now - starts[0] > self.window_seconds:
            starts.popleft()
        if self._active[key] >= self.concurrent:
            raise RateLimited(
                f"You already have {self.concurrent} runs going; wait for one to finish.", 2
            )
        if len(starts) >= self.per_minute:
            wait = math.ceil(self.window_seconds - (now - starts[0]))
            raise RateLimited(
                f"That is {self.per_minute} runs in a minute, the limit; try again in {wait} s.",
                max(wait, 1),
            )
        starts.append(now)
        self._active[key] += 1

    def finished(self, key: str) -> None:
        self._active[key] = max(0, self._active[key] - 1)

"""Limits on attempts: sliding windows per key, and the run limiter built on them.

Kept in the web process's memory: with several replicas each enforces its own share. The
sandbox worker's queue is the shared, hard limit behind run limits."""

from __future__ import annotations

import time
from collections import defaultdict, deque
from dataclasses import dataclass, field

from app.domain import RateLimited, wait_in_words


@dataclass
class SlidingWindow:
    """At most `limit` hits per key in any `window_seconds`."""

    limit: int
    window_seconds: float
    message: str  # what the person is told; "{wait}" becomes the time to wait
    _hits: dict[str, deque[float]] = field(default_factory=lambda: defaultdict(deque))

    def check(self, key: str) -> None:
        """RateLimited when `key` has used up its window (counts nothing)."""
        now = time.monotonic()
        hits = self._hits[key]
        while hits and now - hits[0] > self.window_seconds:
            hits.popleft()
        if len(hits) >= self.limit:
            wait = max(1.0, self.window_seconds - (now - hits[0]))
            raise RateLimited(self.message.format(wait=wait_in_words(wait)), round(wait + 0.5))

    def hit(self, key: str) -> None:
        """Count one attempt for `key`, after checking that it may make one."""
        self.check(key)
        self._hits[key].append(time.monotonic())


@dataclass
class RunLimiter:
    """Runs per owner: at most `concurrent` at once and `per_minute` started a minute."""

    per_minute: int = 20
    concurrent: int = 2
    window_seconds: float = 60.0
    _active: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def __post_init__(self) -> None:
        self._starts = SlidingWindow(
            self.per_minute,
            self.window_seconds,
            f"That is {self.per_minute} runs in a minute, the limit; try again in {{wait}}.",
        )

    def admit(self, key: str) -> None:
        """Count a new run for `key`, or raise RateLimited."""
        if self._active[key] >= self.concurrent:
            raise RateLimited(
                f"You already have {self.concurrent} runs going; wait for one to finish.", 2
            )
        self._starts.hit(key)
        self._active[key] += 1

    def finished(self, key: str) -> None:
        self._active[key] = max(0, self._active[key] - 1)


@dataclass
class AccountLimits:
    """Guards against password guessing and mass sign-ups, per client and per account."""

    sign_in_per_client: SlidingWindow = field(
        default_factory=lambda: SlidingWindow(
            30, 600, "Too many sign-in attempts from here; try again in {wait}."
        )
    )
    failures_per_account: SlidingWindow = field(
        default_factory=lambda: SlidingWindow(
            5, 900, "Too many wrong passwords for this account; try again in {wait}."
        )
    )
    sign_up_per_client: SlidingWindow = field(
        default_factory=lambda: SlidingWindow(
            10, 3600, "Too many new accounts from here; try again in {wait}."
        )
    )

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
    """Runs in flight and runs started a minute, counted per owner (a visitor or an account)
    and per client address, which a client cannot mint: fresh cookies from one address share
    that address's allowance, so one client never fills the worker's queue."""

    per_minute: int = 20
    concurrent: int = 2
    per_minute_per_client: int = 40
    concurrent_per_client: int = 4
    window_seconds: float = 60.0
    _active: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    _runs: dict[str, tuple[str, ...]] = field(default_factory=dict)  # run id → counted keys

    def __post_init__(self) -> None:
        self._starts = SlidingWindow(
            self.per_minute,
            self.window_seconds,
            f"That is {self.per_minute} runs in a minute, the limit; try again in {{wait}}.",
        )
        self._client_starts = SlidingWindow(
            self.per_minute_per_client,
            self.window_seconds,
            "Many runs come from your network; try again in {wait}.",
        )

    def admit(self, run_id: str, *, owner: str, client: str) -> None:
        """Count run `run_id` against its owner and its client, or raise RateLimited."""
        client_key = f"client:{client}"
        if self._active[owner] >= self.concurrent:
            raise RateLimited(
                f"You already have {self.concurrent} runs going; wait for one to finish.", 2
            )
        if self._active[client_key] >= self.concurrent_per_client:
            raise RateLimited(
                f"{self.concurrent_per_client} runs from your network are already going; "
                "wait for one to finish.",
                2,
            )
        self._starts.check(owner)
        self._client_starts.check(client_key)
        self._starts.hit(owner)
        self._client_starts.hit(client_key)
        for key in (owner, client_key):
            self._active[key] += 1
        self._runs[run_id] = (owner, client_key)

    def finished(self, run_id: str) -> None:
        """The run ended (or never started): its places are free again. Idempotent."""
        for key in self._runs.pop(run_id, ()):
            self._active[key] -= 1
            if self._active[key] <= 0:
                del self._active[key]


@dataclass
class AccountLimits:
    """Guards against password guessing and mass sign-ups. Attempts count per client;
    wrong passwords per (account, client), so a stranger's guesses never lock the owner out
    (they only use up the stranger's own allowance)."""

    sign_in_per_client: SlidingWindow = field(
        default_factory=lambda: SlidingWindow(
            30, 600, "Too many sign-in attempts from here; try again in {wait}."
        )
    )
    failures_per_account_client: SlidingWindow = field(
        default_factory=lambda: SlidingWindow(
            5, 900, "Too many wrong passwords for this account from here; try again in {wait}."
        )
    )
    sign_up_per_client: SlidingWindow = field(
        default_factory=lambda: SlidingWindow(
            10, 3600, "Too many new accounts from here; try again in {wait}."
        )
    )
    password_checks_per_client: SlidingWindow = field(
        default_factory=lambda: SlidingWindow(
            20, 600, "Too many password checks from here; try again in {wait}."
        )
    )

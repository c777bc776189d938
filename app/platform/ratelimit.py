"""Limits on attempts: sliding windows per key, and the run limiter built on them.

Every count lives in the database (app/platform/limit_store.py): windows count rows of
`limithit`, runs in flight are the run table's queued and running rows. Several web
replicas therefore enforce one limit together, and a replica that restarts forgets
nothing."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import bindparam, func, or_, select
from sqlmodel import Session, col

from app.domain import RateLimited, wait_in_words
from app.models import Run
from app.platform.limit_store import HitStore, digest

IN_FLIGHT = ("queued", "running")
# An owner's runs in flight and its client's, in one statement built once.
_IN_FLIGHT = select(
    func.count().filter(col(Run.visitor) == bindparam("owner")),
    func.count().filter(col(Run.client_sha256) == bindparam("client")),
).where(
    col(Run.status).in_(IN_FLIGHT),
    or_(col(Run.visitor) == bindparam("owner"), col(Run.client_sha256) == bindparam("client")),
)


@dataclass
class SlidingWindow:
    """At most `limit` hits per key in any `window_seconds`."""

    name: str  # tells this window's keys from another's that count the same client
    limit: int
    window_seconds: float
    message: str  # what the person is told; "{wait}" becomes the time to wait
    store: HitStore

    @property
    def window(self) -> timedelta:
        return timedelta(seconds=self.window_seconds)

    def check(self, key: str) -> None:
        """RateLimited when `key` has used up its window (counts nothing). Blocking: call
        it from a worker thread, as the handlers that use it are."""
        self._transaction(key, count=False)

    def hit(self, key: str) -> None:
        """Count one attempt for `key`, after checking that it may make one (blocking)."""
        self._transaction(key, count=True)

    def _transaction(self, key: str, *, count: bool) -> None:
        stored = digest(self.name, key)
        with self.store.engine.begin() as connection:
            now = self.store.begin(connection, [stored])
            counted = self.store.counts(connection, [(stored, now - self.window)])
            self.refuse_if_full(counted.get(stored), now)
            if count:
                self.store.add(connection, [(stored, self.window)], now)

    def refuse_if_full(self, counted: tuple[int, datetime] | None, now: datetime) -> None:
        """RateLimited when the key's hits in the window (HitStore.counts) fill it."""
        if counted is None or counted[0] < self.limit:
            return
        wait = max(1.0, self.window_seconds - (now - counted[1]).total_seconds())
        raise RateLimited(self.message.format(wait=wait_in_words(wait)), round(wait + 0.5))


def client_digest(client: str) -> str:
    """What a run keeps of its client's address (Run.client_sha256)."""
    return hashlib.sha256(client.encode()).hexdigest()


class RunLimiter:
    """Runs in flight and runs started a minute, counted per owner (a visitor or an account),
    and a guest's also per client address, which a client cannot mint: fresh cookies (or
    cookie-less programs) from one address share that address's allowance, so one client
    never fills the workers' queue. A signed-in user's runs count against the account
    alone: someone behind a busy address gets their own allowance by signing in."""

    def __init__(
        self,
        store: HitStore,
        *,
        per_minute: int = 20,
        concurrent: int = 2,
        per_minute_per_client: int = 40,
        concurrent_per_client: int = 4,
        window_seconds: float = 60.0,
    ) -> None:
        self.store = store
        self.concurrent = concurrent
        self.concurrent_per_client = concurrent_per_client
        self.starts = SlidingWindow(
            "run_starts",
            per_minute,
            window_seconds,
            f"That is {per_minute} runs in a minute, the limit; try again in {{wait}}.",
            store,
        )
        self.client_starts = SlidingWindow(
            "run_starts_per_client",
            per_minute_per_client,
            window_seconds,
            "Many runs come from your network; try again in {wait}.",
            store,
        )

    def admit(self, run: Run, *, client: str | None) -> None:
        """Insert `run` (queued) if its owner (`run.visitor`) and its client have room for
        it, in one transaction; RateLimited, and nothing stored, when they have not.
        `client` is the address of a guest's run; None for a signed-in user's, which the
        address's limits neither count nor refuse."""
        run.client_sha256 = client_digest(client) if client is not None else None
        owner = digest(self.starts.name, run.visitor)
        windows = [(self.starts, owner)]
        if client is not None:
            windows.append((self.client_starts, digest(self.client_starts.name, client)))
        with Session(self.store.engine, expire_on_commit=False) as session:
            connection = session.connection()
            now = self.store.begin(connection, [key for _, key in windows])
            mine, from_client = connection.execute(
                _IN_FLIGHT, {"owner": run.visitor, "client": run.client_sha256}
            ).one()
            if mine >= self.concurrent:
                raise RateLimited(
                    f"You already have {self.concurrent} runs going; wait for one to finish.", 2
                )
            if client is not None and from_client >= self.concurrent_per_client:
                raise RateLimited(
                    f"{self.concurrent_per_client} runs from your network are already going; "
                    "wait for one to finish.",
                    2,
                )
            counted = self.store.counts(connection, [(k, now - w.window) for w, k in windows])
            for window, key in windows:
                window.refuse_if_full(counted.get(key), now)
            self.store.add(connection, [(k, w.window) for w, k in windows], now)
            session.add(run)
            session.commit()


class AccountLimits:
    """Guards against password guessing and mass sign-ups. Attempts count per client;
    wrong passwords per (account, client), so a stranger's guesses never lock the owner out
    (they only use up the stranger's own allowance)."""

    def __init__(self, store: HitStore) -> None:
        self.sign_in_per_client = SlidingWindow(
            "sign_in_per_client",
            30,
            600,
            "Too many sign-in attempts from here; try again in {wait}.",
            store,
        )
        self.failures_per_account_client = SlidingWindow(
            "failures_per_account_client",
            5,
            900,
            "Too many wrong passwords for this account from here; try again in {wait}.",
            store,
        )
        self.sign_up_per_client = SlidingWindow(
            "sign_up_per_client",
            10,
            3600,
            "Too many new accounts from here; try again in {wait}.",
            store,
        )
        self.password_checks_per_client = SlidingWindow(
            "password_checks_per_client",
            20,
            600,
            "Too many password checks from here; try again in {wait}.",
            store,
        )

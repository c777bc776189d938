"""Passwords: the rules a new one must meet, and hashing and checking with argon2id.

Hashing takes about 50 ms of CPU and 64 MiB of memory on purpose, so it never runs on the
event loop (the handlers that check passwords are plain `def`, run in the server's thread
pool), and `PasswordChecks` lets only a few threads hash at once, and those beyond the first
at a lower CPU priority: further ones wait their turn, so a flood of sign-ins cannot take
every core or gigabytes of memory, nor the CPU the event loop needs, while a lone sign-in on
a machine busy with other work is not starved."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from app.domain import AccountError

MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 256  # argon2 takes any length; this only bounds the work per request
T = TypeVar("T")
_hasher = PasswordHasher()


# The nice value of the checks that run beside another. argon2 hashes on as many threads as
# its lanes (4), which inherit it: a few checks at once would otherwise take every core from
# the event loop, and health checks and pages would wait a second behind a burst of wrong
# passwords. The first check at a time keeps the server's priority: at nice 10 beside other
# work at normal priority it gets a twentieth of a core, and every sign-in waits seconds.
HASHING_NICE = 10


def _lower_priority() -> None:
    # Linux gives each thread its own nice value; elsewhere the same work at normal priority.
    with contextlib.suppress(AttributeError, OSError):
        thread = threading.get_native_id()
        nice = max(os.getpriority(os.PRIO_PROCESS, thread), HASHING_NICE)  # never higher
        os.setpriority(os.PRIO_PROCESS, thread, nice)


class PasswordChecks:
    """At most `threads` password operations at once (called from worker threads); the caller
    waits. One runs on a thread at the server's own priority whenever that thread is free,
    the others on a pool at a lower one (HASHING_NICE). A thread's nice value can be raised
    but not lowered again without privilege, hence two pools rather than one retuned."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self._first = ThreadPoolExecutor(1, thread_name_prefix="password")
        self._first_free = threading.Lock()
        self._others = (
            ThreadPoolExecutor(
                threads - 1, thread_name_prefix="password-niced", initializer=_lower_priority
            )
            if threads > 1
            else None
        )

    def run(self, operation: Callable[..., T], /, *args: object, **kwargs: object) -> T:
        # With only one thread allowed, every check waits for it; otherwise a check that
        # finds it busy goes to the niced pool at once.
        if self._first_free.acquire(blocking=self._others is None):
            try:
                return self._first.submit(operation, *args, **kwargs).result()
            finally:
                self._first_free.release()
        assert self._others is not None
        return self._others.submit(operation, *args, **kwargs).result()


@cache
def _dummy_hash() -> str:
    """Verifying against this when the user does not exist takes as long as a real check, so
    the time a refusal takes does not tell whether the name exists. Made on first need."""
    return _hasher.hash("not a real password, only a timing stand-in")


@cache
def _common_passwords() -> frozenset[str]:
    """The 30,000 most common passwords of zxcvbn's list, loaded on first use (0.8 MB)."""
    from zxcvbn.frequency_lists import FREQUENCY_LISTS  # type: ignore[import-untyped]

    return frozenset(FREQUENCY_LISTS["passwords"])


def check_new(password: str, *, username: str = "") -> None:
    """Length 8 or more, no composition rules; common and guessable passwords are refused."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AccountError(
            f"Use at least {MIN_PASSWORD_LENGTH} characters for the password.", field="password"
        )
    if len(password) > MAX_PASSWORD_LENGTH:
        raise AccountError(
            f"Use at most {MAX_PASSWORD_LENGTH} characters for the password.", field="password"
        )
    lowered = password.lower()
    if lowered in _common_passwords() or (username and username in lowered):
        raise AccountError(
            "That password is too easy to guess: it is one of the most common passwords or "
            "holds your username. A few unrelated words make a strong one.",
            field="password",
        )


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def verify_nobody(password: str) -> None:
    """As long as a real check, for a name that has no account."""
    verify(_dummy_hash(), password)


def needs_rehash(password_hash: str) -> bool:
    return _hasher.check_needs_rehash(password_hash)

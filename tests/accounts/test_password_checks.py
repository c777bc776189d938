"""Password checks (app/accounts/passwords.py PasswordChecks): at most a few at once, those
beside the first on threads of lower CPU priority than the server's, so that a burst of wrong
passwords cannot take the cores the event loop and the pages need, while a lone check is not
starved by other work on the machine."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.accounts.passwords import HASHING_NICE, PasswordChecks


def _nice_of_this_thread() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="per-thread nice is Linux's")
def test_a_lone_check_keeps_the_callers_priority() -> None:
    # On a machine busy with other work at normal priority, a check at nice 10 gets a
    # twentieth of a core: a lone sign-in must not wait behind work that is not the server's.
    checks = PasswordChecks(2)
    caller = _nice_of_this_thread()
    assert checks.run(_nice_of_this_thread) == caller
    assert checks.run(_nice_of_this_thread) == caller  # and the next one alone too


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="per-thread nice is Linux's")
def test_a_check_beside_another_runs_at_a_lower_priority() -> None:
    checks = PasswordChecks(2)
    caller = _nice_of_this_thread()
    first_in, release = threading.Event(), threading.Event()

    def hold() -> int:
        first_in.set()
        release.wait(timeout=10)
        return _nice_of_this_thread()

    with ThreadPoolExecutor(1) as other_caller:
        first = other_caller.submit(checks.run, hold)
        assert first_in.wait(timeout=10)
        beside = checks.run(_nice_of_this_thread)
        release.set()
        assert first.result() == caller
    assert beside == max(caller, HASHING_NICE)
    assert _nice_of_this_thread() == caller  # the caller's own thread is left as it was


def _most_at_once(checks: PasswordChecks, *, calls: int, wait_for_a_second: float) -> int:
    """How many of `calls` checks made at once ran together at most. Each waits up to
    `wait_for_a_second` seconds for a second check to join it, so that two at once happen
    whenever they are allowed to."""
    running, most = 0, 0
    lock = threading.Lock()
    two_in = threading.Event()

    def check() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            if running == 2:
                two_in.set()
        two_in.wait(timeout=wait_for_a_second)
        with lock:
            running -= 1

    with ThreadPoolExecutor(calls) as callers:
        for future in [callers.submit(checks.run, check) for _ in range(calls)]:
            future.result()
    return most


def test_one_thread_allowed_means_one_check_at_a_time() -> None:
    assert _most_at_once(PasswordChecks(1), calls=4, wait_for_a_second=0.2) == 1


def test_no_more_than_the_allowed_checks_run_at_once() -> None:
    assert _most_at_once(PasswordChecks(2), calls=8, wait_for_a_second=10) == 2

"""The secrets made on the event loop's thread (a new visitor's key, each CSRF mask) come from
OpenSSL's generator (app/web/cookies.py: random_bytes), which keeps the GIL. They must stay
what `secrets` gave: unpredictable, never repeated, and different in a forked server process
from its parent's (the generator is reseeded after a fork)."""

from __future__ import annotations

import re
import subprocess
import sys

from fastapi.testclient import TestClient

from app.settings import PROJECT_ROOT
from app.web.cookies import VISITOR_COOKIE, random_bytes, random_token


def test_tokens_are_url_safe_of_the_asked_length_and_never_repeat() -> None:
    tokens = {random_token(24) for _ in range(2000)}
    assert len(tokens) == 2000
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{32}", token) for token in tokens)
    assert len(random_bytes(20)) == 20
    # Not stuck on a value: over 2,000 draws every byte value turns up.
    assert len(set(b"".join(random_bytes(16) for _ in range(2000)))) == 256


# Forked in a process of its own, which has no other thread: a fork of the test process,
# whose other threads may hold OpenSSL's locks, could hang the child.
_FORKS = """
import os
from app.web.cookies import random_bytes
random_bytes(16)  # the parent's generator has started before the fork
read_end, write_end = os.pipe()
child = os.fork()
if child == 0:
    os.close(read_end)
    os.write(write_end, random_bytes(32))
    os._exit(0)
os.close(write_end)
parent_draw = random_bytes(32)
with os.fdopen(read_end, "rb") as pipe:
    child_draw = pipe.read()
os.waitpid(child, 0)
print(parent_draw.hex(), child_draw.hex())
"""


def test_a_forked_process_draws_other_bytes_than_its_parent() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _FORKS],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    parent_draw, child_draw = done.stdout.split()
    assert len(bytes.fromhex(child_draw)) == 32 and child_draw != parent_draw


def test_each_new_visitor_gets_a_key_of_its_own(client: TestClient) -> None:
    keys = set()
    for _ in range(5):
        client.cookies.clear()
        client.get("/items/dropout")
        keys.add(client.cookies.get(VISITOR_COOKIE))
    assert len(keys) == 5 and all(key and len(key) == 32 for key in keys)

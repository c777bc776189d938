"""`backprop serve` started as root: the sandbox worker stays root, the web server runs as
an unprivileged user that owns the data folder, and code still runs end to end."""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from app.settings import PROJECT_ROOT
from tests.support import databases
from tests.support.processes import free_port
from tests.support.sandbox_worker import needs_isolation

pytestmark = needs_isolation


def uid_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))  # type: ignore[union-attr]


def children(pid: int) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


@pytest.fixture
def served(imported_db_template: str) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    port = free_port()
    # A folder the web server's user can reach (pytest's own temporary folders are root's).
    base_dir = Path(tempfile.mkdtemp(prefix="backprop-serve-"))
    base_dir.chmod(0o755)
    data = base_dir / "data"
    with ExitStack() as stack:
        # On SQLite the app makes its database in DATA_DIR, as a real start does; on
        # PostgreSQL it gets a copy of the session's template.
        database = (
            {"DATABASE_URL": stack.enter_context(databases.copy_of(imported_db_template, data))}
            if databases.on_postgres()
            else {}
        )
        yield from _serve(base_dir, data, port, database)


def _serve(
    base_dir: Path, data: Path, port: int, database: dict[str, str]
) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    env = {
        **os.environ,
        **database,
        "DATA_DIR": str(data),
        "PORT": str(port),
        "SECRET_KEY": "serve-test",
        "COMPILE_CACHE_WARM": "false",  # minutes of background CPU the tests do not need
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve"],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/health", timeout=2) as response:
                    if json.load(response)["sandbox"]["available"]:
                        break
            except (OSError, KeyError, ValueError):
                pass
            assert process.poll() is None, "backprop serve exited"
            assert time.monotonic() < deadline, "the app or its sandbox did not become ready"
            time.sleep(0.5)
        yield process, base, data
    finally:
        kids = children(process.pid)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        shutil.rmtree(base_dir, ignore_errors=True)
        time.sleep(0.5)
        left = [p for p in kids if Path(f"/proc/{p}").exists()]
        assert left == [], "the web server and the worker end with backprop serve"


def test_the_web_server_drops_root_and_the_worker_keeps_it(
    served: tuple[subprocess.Popen[bytes], str, Path],
) -> None:
    process, base, data = served
    web_user = pwd.getpwnam("backprop")
    assert uid_of(process.pid) == 0  # the supervisor, which can stop the root worker
    kids = children(process.pid)
    cmdlines = {p: Path(f"/proc/{p}/cmdline").read_text() for p in kids}
    workers = [p for p, cmd in cmdlines.items() if "sandbox" in cmd]
    webs = [p for p, cmd in cmdlines.items() if "sandbox" not in cmd]
    assert workers and all(uid_of(p) == 0 for p in workers)
    assert webs and all(uid_of(p) == web_user.pw_uid for p in webs)
    assert data.stat().st_uid == web_user.pw_uid
    if not databases.on_postgres():  # the SQLite file is the web server's, made by it
        assert (data / "backprop.db").stat().st_uid == web_user.pw_uid
    body = json.dumps({"code": "print(6 * 7)", "backend": "cpu"}).encode()
    request = urllib.request.Request(
        f"{base}/api/runs", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        started = json.load(response)
    events = f"{base}/api/runs/{started['id']}/events?token={started['token']}"
    with urllib.request.urlopen(events, timeout=60) as stream:
        text = stream.read().decode()
    assert '"verdict": "ok"' in text and '"stdout": "42\\n"' in text

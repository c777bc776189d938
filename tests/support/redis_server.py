"""A real redis-server for the fleet's tests (Debian's package, installed by
`.ci/setup --dev`), started from deploy/redis.conf on a free port in a folder of its own,
and runner agents as real processes (`python -m app.agent`)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from app.settings import PROJECT_ROOT
from tests.support.processes import free_port

CONFIG = PROJECT_ROOT / "deploy" / "redis.conf"


class RedisServer:
    """One redis-server process; kill it and start it again on the same port and files."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is missing: run .ci/setup --dev")
        self.binary = binary
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        folder.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, decode_responses=True)

    def start(self) -> None:
        args = [self.binary, str(CONFIG), "--port", str(self.port), "--dir", str(self.folder)]
        with open(self.folder / "redis.log", "ab") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while True:
            try:
                if self.client().ping():
                    return
            except redis.ConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((self.folder / "redis.log").read_text()) from None
                time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final write of the append-only file."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def start_agent(
    redis_url: str,
    log: Path,
    *,
    pool: str = "cpu",
    slots: int = 1,
    executor: str = "fake",
    socket_path: Path | None = None,
    heartbeat: float = 0.2,
    lease: float = 1.0,
    metrics_port: int = 0,
) -> subprocess.Popen[bytes]:
    """A runner agent process: no database URL or secret in its environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SECRET_KEY")}
    args = [
        sys.executable, "-m", "app.agent", "--pool", pool, "--redis-url", redis_url,
        "--executor", executor, "--slots", str(slots), "--heartbeat-seconds", str(heartbeat),
        "--lease-seconds", str(lease), "--metrics-port", str(metrics_port),
    ]  # fmt: skip
    if socket_path is not None:
        args += ["--socket", str(socket_path)]
    with open(log, "ab") as out:
        return subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, cwd=PROJECT_ROOT, env=env
        )


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """End a process this test started, however it was left (stopped ones included)."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGCONT)
        process.kill()
    process.wait(timeout=10)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of the test's own, stopped after it (`pytest_plugins` names this
    module where it is wanted)."""
    server = RedisServer(tmp_path / "redis")
    server.start()
    yield server
    server.stop()

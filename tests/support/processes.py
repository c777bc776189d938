"""Servers the tests and benches start as processes of their own: a free port, and a web
process (uvicorn over app.asgi, configured by its environment) once it answers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2

from app.settings import PROJECT_ROOT


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_web(
    env: dict[str, str], base: Path, timeout_seconds: float = 120
) -> tuple[subprocess.Popen[bytes], str]:
    """`uvicorn app.asgi:app` with `env` over this environment, its DATA_DIR and log in
    `base`; returned once /api/health answers: the process and its URL. RuntimeError, with
    its log, when it exits or does not answer in time."""
    port = free_port()
    base.mkdir(parents=True, exist_ok=True)
    log = base / "server.log"
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "app.asgi:app", "--port", str(port)],
            cwd=PROJECT_ROOT,
            env={**os.environ, "DATA_DIR": str(base / "data"), **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_seconds
    while True:
        try:
            if httpx2.get(f"{url}/api/health", timeout=2).status_code == 200:
                return process, url
        except httpx2.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"the web process did not start: {log.read_text()[-3000:]}")
        time.sleep(0.2)

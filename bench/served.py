"""Start `backprop serve` for a benchmark over a private data folder, and stop it after."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def served(
    port: int,
    settings: dict[str, str],
    ready: Callable[[dict[str, Any]], bool],
    root: Path = ROOT,
) -> Iterator[str]:
    """The app's base URL once `ready(health)` holds, served from the checkout `root` (this
    one, or another for a before/after comparison in one run). The data folder is one the
    web server's unprivileged user can reach (`backprop serve` drops root for it)."""
    folder = Path(tempfile.mkdtemp(prefix="backprop-bench-"))
    folder.chmod(0o755)
    env = {
        **os.environ,
        "DATA_DIR": str(folder / "data"),
        "PORT": str(port),
        # Warming the compile cache would take the CPU the figures are about (a bench that
        # wants it says so in `settings`).
        "COMPILE_CACHE_WARM": "false",
        **settings,
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/health", timeout=2) as response:
                    if ready(json.load(response)):
                        break
            except (OSError, KeyError, ValueError):
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                sys.exit("the app did not become ready")
            time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:  # a server still stuck in what was measured
            server.kill()
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)

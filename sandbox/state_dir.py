"""Where a sandbox worker keeps its state (the jails' root, /etc, the compile cache), which
also names its runs' cgroups (cgroups.state_key)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def default_state_dir(instance: str = "") -> Path:
    """Root's own runtime folder rather than a guessable path in a world-writable /tmp;
    `instance` tells apart the workers of several servers on one host."""
    suffix = f"-{instance}" if instance else ""
    if os.geteuid() == 0:
        return Path(f"/run/backprop-sandbox{suffix}")
    return Path(tempfile.gettempdir()) / f"backprop-sandbox-{os.getuid()}{suffix}"


def state_dir_for(data_dir: Path) -> Path:
    """The state folder of the worker that serves the data in `data_dir`: one per data
    folder, so that two servers on one host never share one (the worker sweeps the run
    cgroups it finds keyed by its state folder at start, and would end the other's runs),
    while a restarted server finds what its previous life left."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:12]
    return default_state_dir(digest)

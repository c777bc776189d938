"""The fleet's clocks are refused when a lease could lapse between two heartbeats."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from app.settings import PROJECT_ROOT, Settings


def test_a_lease_no_longer_than_the_heartbeat_is_refused() -> None:
    with pytest.raises(ValidationError, match="FLEET_LEASE_SECONDS"):
        Settings(fleet_heartbeat_seconds=2, fleet_lease_seconds=2)


def test_the_agent_refuses_such_a_lease_too() -> None:
    args = ["--pool", "cpu", "--heartbeat-seconds", "2", "--lease-seconds", "1"]
    done = subprocess.run(
        [sys.executable, "-m", "app.agent", *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--lease-seconds" in done.stderr

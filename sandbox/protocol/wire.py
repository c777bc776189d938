"""How messages travel: one JSON object per line, and the version of the protocol they speak."""

from __future__ import annotations

import json
from typing import Any

# Sent as "v" in every run message: a worker refuses a run in a version it does not speak,
# rather than guess at what an older or newer client meant. Version 2 added graded runs
# (a request's `grading`); a worker speaks every version from OLDEST_VERSION on, and a client
# sends the lowest that carries what it asks (RunRequest.protocol_version), so that a plain
# run still reaches a worker that speaks only version 1. Version 3 added `phase` events (a
# lab's compiling and running, phases.py): a worker sends them only to a client that asked in
# version 3 or later, so an older client never meets an event it cannot read. Upgrade the
# workers before the app: a plain run now asks in version 3.
PROTOCOL_VERSION = 3
OLDEST_VERSION = 1
GRADING_VERSION = 2
PHASE_VERSION = 3


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """One message; ValueError for anything that is not a JSON object."""
    try:
        message = json.loads(line)
    except RecursionError:  # deeply nested arrays: malformed, not a crash of the reader
        raise ValueError("a message nests too deeply") from None
    if not isinstance(message, dict):
        raise ValueError("a message must be a JSON object")
    return message

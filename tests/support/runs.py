"""Reading a run's server-sent events the way the browser does."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from fastapi.testclient import TestClient

Frame = tuple[str | None, str, Any]  # (id, event, data)


def sse_frames(lines: Iterable[str]) -> Iterator[Frame]:
    """The frames of an event stream's lines, up to and including the result."""
    event_id: str | None = None
    kind = ""
    for line in lines:
        if line.startswith("id: "):
            event_id = line[len("id: ") :]
        elif line.startswith("event: "):
            kind = line[len("event: ") :]
        elif line.startswith("data: "):
            yield event_id, kind, json.loads(line[len("data: ") :])
            if kind == "result":
                return
            event_id = None


def events_of(client: TestClient, run_id: str, **kwargs: Any) -> list[tuple[str, Any]]:
    """(event, data) pairs of the run's stream, up to and including its result."""
    with client.stream("GET", f"/api/runs/{run_id}/events", **kwargs) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        return [(kind, data) for _, kind, data in sse_frames(response.iter_lines())]

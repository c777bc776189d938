"""Reading a run's server-sent events the way the browser does."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient


def events_of(client: TestClient, run_id: str, **kwargs: Any) -> list[tuple[str, Any]]:
    """(event, data) pairs of the run's stream, up to and including its result."""
    events = []
    with client.stream("GET", f"/api/runs/{run_id}/events", **kwargs) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        kind = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[len("event: ") :]
            elif line.startswith("data: "):
                events.append((kind, json.loads(line[len("data: ") :])))
                if kind == "result":
                    break
    return events

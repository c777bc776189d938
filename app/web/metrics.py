"""Request timing for Prometheus, by route template (never the raw path, which would make a
time series per item or run id), and the /metrics answer."""

from __future__ import annotations

import time

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import metrics


class RequestTiming:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def timed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, timed)
        finally:
            route = getattr(scope.get("route"), "path", None)
            if route is None:
                route = "/static" if scope["path"].startswith("/static/") else "unmatched"
            metrics.REQUEST_SECONDS.labels(scope["method"], route, f"{status // 100}xx").observe(
                time.perf_counter() - started
            )


def exposition(
    runs_by_status: dict[str, int],
    pools: dict[str, tuple[bool, int]],
    workers: dict[str, int] | None = None,
) -> bytes:
    """Everything /metrics answers: this process's counters, then the scrape-time gauges."""
    return generate_latest(metrics.REGISTRY) + metrics.gauges(runs_by_status, pools, workers)


CONTENT_TYPE = CONTENT_TYPE_LATEST

"""The /metrics answer: this process's counters, then the gauges read at scrape time.
Requests are timed where they end (app/web/request_id.py)."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app import metrics


def exposition(
    runs_by_status: dict[str, int],
    pools: dict[str, tuple[bool, int]],
    workers: dict[str, int] | None = None,
) -> bytes:
    """Everything /metrics answers: this process's counters, then the scrape-time gauges."""
    return generate_latest(metrics.REGISTRY) + metrics.gauges(runs_by_status, pools, workers)


CONTENT_TYPE = CONTENT_TYPE_LATEST

"""What the app counts for Prometheus (served at GET /metrics by app/web/metrics.py).

The counters and histograms live in this process (`REGISTRY`); a scrape also reads, from the
database, how many runs are queued and running, which every replica sees alike (`gauges`).
With several server processes each is scraped on its own (one target per process)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

REGISTRY = CollectorRegistry(auto_describe=True)

REQUEST_SECONDS = Histogram(
    "backprop_http_request_duration_seconds",
    "Time to answer an HTTP request, by method, route and status class.",
    ["method", "route", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
    registry=REGISTRY,
)
RUN_SECONDS = Histogram(
    "backprop_run_duration_seconds",
    "Wall-clock time of finished runs in the sandbox, by backend and verdict.",
    ["backend", "verdict"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 180),
    registry=REGISTRY,
)
RUN_VERDICTS = Counter(
    "backprop_run_verdicts",
    "Finished runs by verdict.",
    ["verdict"],
    registry=REGISTRY,
)
QUIZ_SUBMISSIONS = Counter(
    "backprop_quiz_submissions",
    "Quiz attempts submitted (or closed by their deadline), by mode.",
    ["mode"],
    registry=REGISTRY,
)


def gauges(
    runs_by_status: dict[str, int],
    pools: dict[str, tuple[bool, int]],
    workers: dict[str, int] | None = None,
) -> bytes:
    """The values read at scrape time, in the exposition format: runs queued and running
    (the database is their source of truth, the same from every replica), per sandbox
    backend whether it runs code and how many runs wait for a slot, and the live workers of
    each pool."""
    registry = CollectorRegistry()
    registry.register(_Snapshot(runs_by_status, pools, workers or {}))
    return generate_latest(registry)


class _Snapshot(Collector):
    def __init__(
        self,
        runs_by_status: dict[str, int],
        pools: dict[str, tuple[bool, int]],
        workers: dict[str, int],
    ) -> None:
        self.runs_by_status = runs_by_status
        self.pools = pools
        self.workers = workers

    def collect(self) -> Iterator[GaugeMetricFamily]:
        runs = GaugeMetricFamily(
            "backprop_runs", "Runs not yet ended, by status.", labels=["status"]
        )
        for status in ("queued", "running"):
            runs.add_metric([status], self.runs_by_status.get(status, 0))
        yield runs
        up = GaugeMetricFamily(
            "backprop_sandbox_pool_up",
            "Whether the sandbox worker runs code on this backend (1) or not (0).",
            labels=["backend"],
        )
        waiting = GaugeMetricFamily(
            "backprop_sandbox_pool_waiting",
            "Runs waiting for a slot, by backend.",
            labels=["backend"],
        )
        for backend, (alive, queued) in self.pools.items():
            up.add_metric([backend], 1 if alive else 0)
            waiting.add_metric([backend], queued)
        yield up
        yield waiting
        live = GaugeMetricFamily(
            "backprop_pool_workers",
            "Live sandbox workers per pool (with RUN_QUEUE=redis: agents with a fresh heartbeat).",
            labels=["pool"],
        )
        for pool, count in sorted(self.workers.items()):
            live.add_metric([pool], count)
        yield live

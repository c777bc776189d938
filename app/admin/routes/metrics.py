"""GET /metrics: Prometheus's view of this process (see app/metrics.py)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Response

from app.deps import EngineDep, RunQueueDep
from app.runs import runs
from app.web.metrics import CONTENT_TYPE, exposition

router = APIRouter(include_in_schema=False)


@router.get("/metrics")
async def metrics_page(engine: EngineDep, queue: RunQueueDep) -> Response:
    """Request latency, run verdicts and durations, quiz submissions; runs queued and running,
    and the sandbox's backends (read now). Open like /api/health: restrict it at the load
    balancer where the numbers should stay private."""
    sandbox = await queue.status()  # before any connection is held: see pages.py
    workers = await queue.workers()
    counts = await asyncio.to_thread(runs.unfinished_counts, engine)
    pools = {b: (sandbox.available, sandbox.queue.get(b, 0)) for b in sandbox.backends}
    return Response(exposition(counts, pools, workers), media_type=CONTENT_TYPE)

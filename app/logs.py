"""Logging: one line per event, JSON for machines (LOG_FORMAT=json) or plain text for a
person at a terminal, with the request's and the run's ids on every line logged while they
are bound. Everything logs through the standard library (the app's `logging.getLogger`,
uvicorn's, the libraries'); structlog's formatter renders it, so one configuration covers all.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import structlog

# What every line carries, in this order, before the renderer.
_SHARED: list[structlog.types.Processor] = [
    structlog.contextvars.merge_contextvars,  # request_id, run_id: bound below
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def configure(log_format: str = "text", level: int = logging.INFO) -> None:
    """Send every logger's records to stderr, rendered as `log_format` ("json" or "text")."""
    # JSON lines carry a traceback as one string field; the console renderer lays out the
    # exception itself (and warns when it finds one already formatted), as plain text: with
    # rich installed it would otherwise draw a coloured box into a log file.
    rendering: list[structlog.types.Processor] = (
        [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
        if log_format == "json"
        else [
            structlog.dev.ConsoleRenderer(
                colors=False, exception_formatter=structlog.dev.plain_traceback
            )
        ]
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*_SHARED, structlog.stdlib.ExtraAdder()],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                *rendering,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # uvicorn gives its loggers handlers of their own: let them reach the root's instead.
    for name in ("uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate, logger.disabled = True, False
    # Its access lines would repeat app/web/request_id.py's, which carry the route and time.
    uvicorn_access = logging.getLogger("uvicorn.access")
    uvicorn_access.handlers[:] = []
    uvicorn_access.disabled = True


@contextmanager
def bound(**ids: str) -> Iterator[None]:
    """Put `ids` (request_id, run_id) on every line logged inside the block, in this task
    and the tasks it starts."""
    with structlog.contextvars.bound_contextvars(**ids):
        yield

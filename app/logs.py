"""Logging: one line per event, JSON for machines (LOG_FORMAT=json) or plain text for a
person at a terminal, with the request's and the run's ids on every line logged while they
are bound. Everything logs through the standard library (the app's `logging.getLogger`,
uvicorn's, the libraries'); structlog's formatter renders it, so one configuration covers all.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import structlog

# One line per request (app/web/request_id.py): the line written most, given a shortcut below.
ACCESS_LOGGER = "backprop.access"
# What a record carries before `extra` adds to it: the rest is the line's own fields.
_RECORD_KEYS = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message"}
_EVENT_WIDTH = 30  # the console renderer pads the event to this width
_LEVEL_WIDTH = len("exception")  # and the level to its longest name
_QUOTED = frozenset(" \t=\r\n\"'")  # a text value holding one of these is written as repr()

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
    as_json = log_format == "json"
    rendering: list[structlog.types.Processor] = (
        [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
        if as_json
        else [
            structlog.dev.ConsoleRenderer(
                colors=False, exception_formatter=structlog.dev.plain_traceback
            )
        ]
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        _Formatter(
            as_json=as_json,
            foreign_pre_chain=[*_SHARED, structlog.stdlib.ExtraAdder()],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                *rendering,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    # No line names the code that logged it, nor its thread or process: records need not
    # look them up (the logging HOWTO's "Optimization" switches). Finding the caller walked
    # the stack at each of the access lines, one per request.
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
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


class _Formatter(structlog.stdlib.ProcessorFormatter):
    """structlog's formatter, with a shortcut for the access line. Through the general chain
    (a copy of the record, five processors, the console renderer's columns) one access line
    cost about 100 us, a tenth of what a page costs to serve; written directly it is a few.
    The line is the same either way: tests/web/test_logs.py compares the two."""

    def __init__(self, *, as_json: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.as_json = as_json

    def format(self, record: logging.LogRecord) -> str:
        if record.name != ACCESS_LOGGER or record.exc_info or record.stack_info:
            return super().format(record)
        # The fields in the order the chain in _SHARED, then structlog's ExtraAdder, put them.
        fields: dict[str, Any] = {"event": record.getMessage()}
        for key, value in structlog.contextvars.get_contextvars().items():
            fields.setdefault(key, value)
        fields["level"] = record.levelname.lower()
        fields["logger"] = record.name
        fields["timestamp"] = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        for key, value in record.__dict__.items():
            if key not in _RECORD_KEYS:
                fields[key] = value
        return json.dumps(fields, default=repr) if self.as_json else _console_line(fields)


def _console_line(fields: dict[str, Any]) -> str:
    """What structlog's ConsoleRenderer (colors=False) writes for a line with no exception."""
    head = (
        f"{fields.pop('timestamp')} [{fields.pop('level'):<{_LEVEL_WIDTH}}] "
        f"{fields.pop('event'):<{_EVENT_WIDTH}} [{fields.pop('logger')}]"
    )
    rest = " ".join(f"{key}={_console_value(fields[key])}" for key in sorted(fields))
    return f"{head} {rest}".rstrip(" ")


def _console_value(value: Any) -> str:
    if isinstance(value, str) and not _QUOTED.intersection(value):
        return value
    return repr(value)

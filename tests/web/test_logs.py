"""Log lines: JSON with the request's id on every line a request causes, the id sent back,
a sane client id kept and a strange one replaced, and one access line per request."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog
from fastapi.testclient import TestClient

from app import logs


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    """What the JSON handler writes, captured."""
    logs.configure("json")
    captured = io.StringIO()
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(captured)
    yield captured
    logging.getLogger().handlers[:] = []


def parsed(captured: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in captured.getvalue().splitlines() if line.strip()]


def test_each_request_gets_an_id_sent_back_and_on_its_access_line(
    client: TestClient, lines: io.StringIO
) -> None:
    response = client.get("/items/does-not-exist")
    request_id = response.headers["x-request-id"]
    assert len(request_id) == 16
    [access] = [line for line in parsed(lines) if line["logger"] == "backprop.access"]
    assert access["request_id"] == request_id and access["status"] == 404
    assert access["method"] == "GET" and access["path"] == "/items/does-not-exist"
    assert access["route"] == "/items/{slug}"  # the template, as the metrics label it
    assert access["level"] == "info" and isinstance(access["duration_ms"], float)
    assert access["timestamp"].endswith("Z")  # type: ignore[union-attr]


def test_a_sane_client_id_is_kept_and_a_strange_one_replaced(
    client: TestClient, lines: io.StringIO
) -> None:
    kept = client.get("/api/health", headers={"X-Request-ID": "lb-42.a"})
    assert kept.headers["x-request-id"] == "lb-42.a"
    replaced = client.get("/api/health", headers={"X-Request-ID": 'a b"<script>'})
    assert replaced.headers["x-request-id"] != 'a b"<script>'
    access = [line for line in parsed(lines) if line["logger"] == "backprop.access"]
    assert [line["request_id"] for line in access] == [
        "lb-42.a",
        replaced.headers["x-request-id"],
    ]


def test_lines_logged_while_ids_are_bound_carry_them(lines: io.StringIO) -> None:
    with logs.bound(request_id="r1"), logs.bound(run_id="abc"):
        logging.getLogger("backprop").warning("ended %d runs", 2)
    logging.getLogger("backprop").info("after")
    first, second = parsed(lines)
    assert first["event"] == "ended 2 runs" and first["run_id"] == "abc"
    assert first["request_id"] == "r1" and first["level"] == "warning"
    assert "run_id" not in second and "request_id" not in second


def test_uvicorn_access_lines_are_not_written_beside_ours(lines: io.StringIO) -> None:
    logging.getLogger("uvicorn.access").info('127.0.0.1:1 - "GET / HTTP/1.1" 200')
    logging.getLogger("uvicorn.error").warning("Shutting down")
    assert [line["logger"] for line in parsed(lines)] == ["uvicorn.error"]


def test_an_exception_is_one_json_line_with_its_traceback_in_a_field(
    lines: io.StringIO,
) -> None:
    try:
        raise ValueError("the cause")
    except ValueError:
        logging.getLogger("backprop").exception("run ended badly")
    [line] = parsed(lines)
    assert line["event"] == "run ended badly" and line["level"] == "error"
    assert "Traceback" in line["exception"] and "ValueError: the cause" in line["exception"]  # type: ignore[operator]


def test_text_lines_lay_out_an_exception_plainly_without_a_warning(
    recwarn: pytest.WarningsRecorder,
) -> None:
    logs.configure("text")
    captured = io.StringIO()
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(captured)
    try:
        try:
            raise ValueError("the cause")
        except ValueError:
            logging.getLogger("backprop").exception("run ended badly")
    finally:
        logging.getLogger().handlers[:] = []
    assert "run ended badly" in captured.getvalue()
    assert "ValueError: the cause" in captured.getvalue()
    assert "\x1b[" not in captured.getvalue()  # no terminal colours in a log
    assert not [w for w in recwarn if "format_exc_info" in str(w.message)]


@pytest.mark.parametrize("log_format", ["text", "json"])
@pytest.mark.parametrize(
    "path",
    ["/items/x", "/items/a path with spaces", "/" + "long-" * 12, '/"it\'s"', "/a=b", "/ünï"],
)
def test_the_access_lines_shortcut_writes_what_the_general_chain_writes(
    log_format: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """app/logs.py renders the access line itself; structlog's chain must agree with it to
    the character, but for the moment each took its timestamp."""
    logs.configure(log_format)
    try:
        formatter = logging.getLogger().handlers[0].formatter
        assert isinstance(formatter, structlog.stdlib.ProcessorFormatter)
        record = logging.getLogger(logs.ACCESS_LOGGER).makeRecord(
            logs.ACCESS_LOGGER, logging.INFO, __file__, 1, "%s %s %d", ("GET", path, 404), None,
            extra={"method": "GET", "path": path, "route": "/items/{slug}", "status": 404,
                   "duration_ms": 1.25},
        )  # fmt: skip
        with logs.bound(request_id="lb-42.a"), logs.bound(run_id="r1"):
            general = structlog.stdlib.ProcessorFormatter.format(formatter, record)
            # The shortcut must not fall back on the chain.
            monkeypatch.setattr(structlog.stdlib.ProcessorFormatter, "format", None)
            shortcut = formatter.format(record)
    finally:
        logging.getLogger().handlers[:] = []
    if log_format == "json":
        fast, slow = json.loads(shortcut), json.loads(general)
        assert list(fast) == list(slow)  # the same fields in the same order
        assert {**fast, "timestamp": ""} == {**slow, "timestamp": ""}
    else:
        stamp, _, rest = shortcut.partition(" ")
        assert stamp.endswith("Z") and rest == general.partition(" ")[2]
        assert "[backprop.access]" in rest and "request_id=lb-42.a" in rest

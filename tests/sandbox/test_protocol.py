"""The contract on its own, no worker needed: requests and their rejections, limits, events,
the worker's status, and the protocol version a run message must carry."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

import pytest

from sandbox.protocol import (
    CEILINGS,
    FLOORS,
    MAX_CODE_BYTES,
    PROTOCOL_VERSION,
    Backend,
    Busy,
    Event,
    Finished,
    GradingReport,
    GradingVerdict,
    Limits,
    Mode,
    Output,
    Phase,
    Queued,
    RunRequest,
    RunResult,
    Started,
    TestDone,
    TestResult,
    TestStatus,
    Verdict,
    WorkerState,
    WorkerStatus,
    check_code,
    decode,
    event_from_json,
    event_to_json,
)
from sandbox.server import run_request


def rejection(data: object) -> RunResult:
    result = RunRequest.from_json(data)
    assert isinstance(result, RunResult), result
    assert result.verdict is Verdict.REJECTED and result.exit_code is None
    assert result.stdout == result.stderr == "" and result.wall_ms == 0
    return result


def test_a_good_request_is_read_with_its_limits_clamped() -> None:
    request = RunRequest.from_json(
        {"id": "r-1", "code": "print(1)", "backend": "cpu", "limits": {"wall_seconds": 10**6}}
    )
    assert request == RunRequest(
        "r-1", "print(1)", Backend.CPU, Limits(wall_seconds=CEILINGS.wall_seconds)
    )
    assert RunRequest.from_json({"id": "r", "code": ""}) == RunRequest("r", "", Backend.AUTO)


def test_an_owner_travels_with_the_request_and_only_when_given() -> None:
    request = RunRequest("r", "print(1)", Backend.CPU, owner="ab12")
    assert request.to_json()["owner"] == "ab12"
    assert RunRequest.from_json(request.to_json()) == request
    assert "owner" not in RunRequest("r", "print(1)").to_json()


@pytest.mark.parametrize("owner", ["", "has space", "x" * 65, 7, ["a"], {"a": 1}])
def test_a_bad_owner_is_rejected(owner: object) -> None:
    result = rejection({"id": "r", "code": "print(1)", "owner": owner})
    assert result.id == "r" and "owner" in result.detail


@pytest.mark.parametrize("run_id", [None, "", "has space", "x" * 65, 7, ["a"], "é"])
def test_a_bad_run_id_is_rejected(run_id: object) -> None:
    result = rejection({"id": run_id, "code": "print(1)"})
    assert result.id == "" and "run id" in result.detail


@pytest.mark.parametrize("request_data", [None, [], "run", 3])
def test_a_request_that_is_not_an_object_is_rejected(request_data: object) -> None:
    assert "run id" in rejection(request_data).detail


@pytest.mark.parametrize("code", [None, 3, b"print(1)", ["print(1)"]])
def test_code_that_is_not_a_string_is_rejected(code: object) -> None:
    result = rejection({"id": "r", "code": code, "backend": "cpu"})
    assert result.id == "r" and result.backend == "cpu"
    assert result.detail == "Code must be a string."


def test_code_too_large_or_not_utf8_is_rejected() -> None:
    assert "64 KiB" in rejection({"id": "r", "code": "x" * (MAX_CODE_BYTES + 1)}).detail
    assert RunRequest.from_json({"id": "r", "code": "x" * MAX_CODE_BYTES}) is not None
    assert isinstance(RunRequest.from_json({"id": "r", "code": "é" * 100}), RunRequest)
    assert "UTF-8" in rejection({"id": "r", "code": "\ud800"}).detail


@pytest.mark.parametrize(
    ("backend", "shown"),
    [("tpu", "tpu"), ("CPU", "CPU"), ("", ""), ("x" * 17, ""), (["cpu"], ""), ({}, ""), (1, "")],
)
def test_an_unknown_backend_is_rejected(backend: object, shown: str) -> None:
    result = rejection({"id": "r", "code": "print(1)", "backend": backend})
    assert result.detail == f"Unknown backend '{shown}': use cpu, cuda or auto."
    assert result.backend == shown  # never an object of the client's echoed back


@pytest.mark.parametrize(
    ("limits", "words"),
    [
        ([1, 2], "limits must be an object"),
        ("fast", "limits must be an object"),
        ({"wall_seconds": "10"}, "limit wall_seconds must be a number"),
        ({"memory_mb": True}, "limit memory_mb must be a number"),
        ({"pids": None}, "limit pids must be a number"),
        ({"cpu_seconds": float("nan")}, "limit cpu_seconds must be finite"),
        ({"tmp_mb": float("inf")}, "limit tmp_mb must be finite"),
    ],
)
def test_bad_limits_are_rejected(limits: object, words: str) -> None:
    result = rejection({"id": "r", "code": "print(1)", "limits": limits})
    assert result.detail == f"Bad limits: {words}."


def test_limits_are_clamped_to_their_declared_floors_and_ceilings() -> None:
    names = [f.name for f in fields(Limits)]
    assert Limits.from_json({name: -(10**9) for name in names}) == FLOORS
    assert Limits.from_json({name: 10**9 for name in names}) == CEILINGS
    # A huge integer is clamped too, not an overflow (JSON integers have no bound).
    assert Limits.from_json({"wall_seconds": 10**400}).wall_seconds == CEILINGS.wall_seconds
    for f in fields(Limits):
        floor, ceiling = getattr(FLOORS, f.name), getattr(CEILINGS, f.name)
        assert floor == f.metadata["floor"] and ceiling == f.metadata["ceiling"]
        assert floor <= getattr(Limits(), f.name) <= ceiling, f.name
    assert Limits.from_json(None) == Limits() == Limits().clamped()


def test_clamped_limits_keep_their_types_and_ignore_unknown_names() -> None:
    limits = Limits.from_json({"memory_mb": 300.7, "wall_seconds": 5, "bogus": 1})
    assert limits.memory_mb == 300 and isinstance(limits.memory_mb, int)
    assert limits.wall_seconds == 5.0 and isinstance(limits.wall_seconds, float)
    assert limits.memory_mb == 300 and limits.pids == Limits().pids


def test_code_checks() -> None:
    assert check_code("print(1)") is None
    assert "64 KiB" in (check_code("x" * (MAX_CODE_BYTES + 1)) or "")
    assert "UTF-8" in (check_code("\ud800") or "")
    assert check_code(b"bytes") == "code must be a string"


def test_verdicts_are_a_closed_set() -> None:
    assert {v.value for v in Verdict} == {
        "ok",
        "error",
        "timeout",
        "memory_limit",
        "output_limit",
        "killed",
        "rejected",
        "internal_error",
    }


FULL_RESULT = RunResult(
    id="r-1",
    verdict=Verdict.OUTPUT_LIMIT,
    exit_code=None,
    stdout="a\n",
    stderr="b\n",
    wall_ms=1234,
    backend="cpu",
    device="Some CPU (2 cores)",
    detail="Stopped.",
    cpu_ms=987,
    max_memory_mb=321,
    truncated=True,
)
GRADED_RESULT = RunResult(
    "g",
    Verdict.OK,
    0,
    "",
    "",
    10,
    "cpu",
    "Some CPU",
    grading=GradingReport(
        GradingVerdict.FAILED,
        75.0,
        [TestResult("t", "values", False, TestStatus.PASS)],
        "1 of 2 tests did not pass",
        seed=3,
        mode=Mode.RUN,
    ),
)
EVENTS_ON_THE_WIRE: list[tuple[Event, dict[str, Any]]] = [
    (Queued(2), {"type": "queued", "position": 2, "estimate_seconds": None}),
    (Queued(3, 12.5), {"type": "queued", "position": 3, "estimate_seconds": 12.5}),
    (Started("cpu", "Some CPU"), {"type": "started", "backend": "cpu", "device": "Some CPU"}),
    (Output("stdout", "a\n"), {"type": "stdout", "data": "a\n"}),
    (Output("stderr", "é\ufffd"), {"type": "stderr", "data": "é\ufffd"}),
    (Busy(5), {"type": "busy", "retry_after": 5}),
    (
        Phase("compiling", 120.0),
        {"type": "phase", "phase": "compiling", "allowance_seconds": 120.0},
    ),
    (
        TestDone(TestResult("rows sum to one", "properties", True, TestStatus.FAIL, "off", 3)),
        {
            "type": "test",
            "test": {
                "name": "rows sum to one",
                "category": "properties",
                "hidden": True,
                "status": "fail",
                "message": "off",
                "ms": 3,
            },
        },
    ),
    (Finished(GRADED_RESULT), {"type": "result", "result": GRADED_RESULT.to_json()}),
    (Finished(FULL_RESULT), {"type": "result", "result": FULL_RESULT.to_json()}),
    (
        Finished(RunResult.refused("r", Verdict.REJECTED, "No.", backend="cuda")),
        {
            "type": "result",
            "result": {
                "id": "r",
                "verdict": "rejected",
                "exit_code": None,
                "stdout": "",
                "stderr": "",
                "wall_ms": 0,
                "backend": "cuda",
                "device": "",
                "detail": "No.",
                "cpu_ms": None,
                "max_memory_mb": None,
                "truncated": False,
            },
        },
    ),
]


@pytest.mark.parametrize(("event", "wire"), EVENTS_ON_THE_WIRE, ids=lambda x: type(x).__name__)
def test_every_event_round_trips_through_its_json(event: Event, wire: dict[str, Any]) -> None:
    assert event_to_json(event) == wire
    assert event_from_json(json.loads(json.dumps(event_to_json(event)))) == event
    assert event.type == wire["type"]


def test_every_kind_of_event_is_covered() -> None:
    assert {type(event) for event, _ in EVENTS_ON_THE_WIRE} == set(Event.__args__)


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"type": "telepathy"},
        {"type": "queued"},
        {"type": "queued", "position": "second"},
        {"type": "stdout"},
        {"type": "result", "result": "ok"},
        {"type": "result", "result": {"verdict": "ok"}},
        {"type": "result", "result": {**FULL_RESULT.to_json(), "verdict": "great"}},
    ],
)
def test_what_is_not_an_event_is_a_value_error(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        event_from_json(data)


def test_a_result_from_a_newer_worker_keeps_what_it_knows() -> None:
    data = {**FULL_RESULT.to_json(), "gpu_ms": 5}
    assert RunResult.from_json(data) == FULL_RESULT


@pytest.mark.parametrize(
    "status",
    [
        WorkerStatus(
            WorkerState.READY,
            ["cpu", "cuda"],
            "NVIDIA H100",
            {"cpu": "Some CPU", "cuda": "NVIDIA H100"},
            "ready",
            {"cpu": 0, "cuda": 3},
            {"cpu": "ready: 17 of 17 samples compiled", "cuda": "off"},
            {"cpu": 2, "cuda": 1},
        ),
        WorkerStatus(WorkerState.STARTING, ["cpu"], "Some CPU", {"cpu": "Some CPU"}, "starting"),
        WorkerStatus.unavailable("This server cannot isolate code."),
    ],
    ids=lambda s: s.state.value,
)
def test_worker_status_round_trips_through_its_json(status: WorkerStatus) -> None:
    data = json.loads(json.dumps({"type": "status", **status.to_json()}))
    assert data["state"] == status.state.value
    assert data["available"] is (status.state is WorkerState.READY)
    assert data["protocol"] == PROTOCOL_VERSION
    assert WorkerStatus.from_json(data) == status


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"state": "sleepy", "backends": []},
        {"state": "ready"},
        {"state": "ready", "backends": [], "queue": {"cpu": "many"}},
    ],
)
def test_what_is_not_a_status_is_a_value_error(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        WorkerStatus.from_json(data)


def test_a_run_message_must_speak_this_protocol_version() -> None:
    request = {"id": "r-1", "code": "print(1)", "backend": "cpu"}
    assert run_request({"op": "run", "v": PROTOCOL_VERSION, "request": request}) == RunRequest(
        "r-1", "print(1)", Backend.CPU, Limits()
    )
    for version, said in [
        (None, "no version"),
        (PROTOCOL_VERSION + 1, f"version {PROTOCOL_VERSION + 1}"),
        (0, "version 0"),
        (True, "no version"),
        (float(PROTOCOL_VERSION), "no version"),
        (str(PROTOCOL_VERSION), "no version"),
    ]:
        message = {"op": "run", "request": request}
        if version is not None:
            message["v"] = version
        result = run_request(message)
        assert isinstance(result, RunResult) and result.verdict is Verdict.REJECTED
        assert result.id == "r-1"
        assert result.detail == (
            f"This worker speaks protocol version {PROTOCOL_VERSION}; the run asked for {said}."
        )


def test_a_message_that_is_not_one_json_object_is_a_value_error() -> None:
    assert decode(b'{"op": "status"}\n') == {"op": "status"}
    for line in (b"[]", b"nonsense", b"\xff", b"[" * 100_000):
        with pytest.raises(ValueError):
            decode(line)


GRADING = {
    "slug": "stable-softmax",
    "mode": "run",
    "config": {"slug": "stable-softmax"},
    "reference": "def softmax(x, dim): ...",
    "tests": "DECLARATIONS = []",
}


def test_a_graded_run_needs_protocol_version_2() -> None:
    request = {"id": "g-1", "code": "x = 1", "backend": "cpu", "grading": GRADING}
    graded = run_request({"op": "run", "v": 2, "request": request})
    assert isinstance(graded, RunRequest) and graded.grading is not None
    assert graded.grading.mode is Mode.RUN and graded.protocol_version() == 2
    old = run_request({"op": "run", "v": 1, "request": request})
    assert isinstance(old, RunResult) and old.verdict is Verdict.REJECTED
    assert "needs protocol version 2" in old.detail
    # A plain run still reaches a worker in version 1; it asks in version 3 for its phases.
    plain = run_request({"op": "run", "v": 1, "request": {"id": "p", "code": "x = 1"}})
    assert isinstance(plain, RunRequest) and plain.protocol_version() == 3


@pytest.mark.parametrize(
    "grading",
    [
        "run",
        {**GRADING, "mode": "everything"},
        {**GRADING, "slug": "../etc"},
        {**GRADING, "reference": 3},
        {**GRADING, "seed": -1},
        {**GRADING, "tests": "x" * (300 * 1024)},
    ],
)
def test_a_malformed_grading_payload_is_rejected(grading: object) -> None:
    request = {"id": "g-2", "code": "x = 1", "grading": grading}
    result = run_request({"op": "run", "v": 2, "request": request})
    assert isinstance(result, RunResult) and result.verdict is Verdict.REJECTED
    assert result.detail.startswith("Bad grading:")

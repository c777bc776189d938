"""Recording a run's outcome (app/runs/recorder.py): output that holds NUL
bytes, markup or text that looks like SSE frames is stored as text, once, on SQLite and on
PostgreSQL; a second outcome for the same run changes nothing."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app import migrate
from app.models import Run
from app.runs.recorder import RunRecorder
from sandbox.protocol import RunResult, Verdict
from tests.support.aio import run_async

pytest_plugins = ["tests.support.postgres"]
TRICKY = 'nul:\x00 <b>bold</b>\nevent: result\ndata: {"x": 1}\n\n'


def record(engine: Engine, result: RunResult) -> Run:
    with Session(engine) as session:
        session.add(
            Run(
                id=result.id,
                visitor="v",
                code_sha256="0" * 64,
                code_bytes=1,
                backend_requested="cpu",
            )
        )
        session.commit()
    recorder = RunRecorder(engine, on_end=())
    run_async(recorder.finished(result.id, result))
    killed = RunResult.refused(result.id, Verdict.KILLED, "Cancelled.")
    run_async(recorder.finished(result.id, killed))  # a late second outcome
    with Session(engine) as session:
        run = session.get(Run, result.id)
        assert run is not None
        return run


def tricky_result(run_id: str) -> RunResult:
    return RunResult(
        id=run_id,
        verdict=Verdict.OK,
        exit_code=0,
        stdout=TRICKY,
        stderr=TRICKY,
        wall_ms=5,
        backend="cpu",
        device="cpu",
    )


def check(run: Run) -> None:
    expected = TRICKY.replace("\x00", "\ufffd")
    assert run.stdout == expected and run.stderr == expected
    assert run.verdict == "ok" and run.status == "done"  # the late outcome changed nothing


def test_tricky_output_is_stored_as_text_once_on_sqlite(engine: Engine) -> None:
    check(record(engine, tricky_result("sqlite-run")))


def test_tricky_output_is_stored_as_text_once_on_postgresql(postgres_engine: Engine) -> None:
    migrate.upgrade(postgres_engine)
    check(record(postgres_engine, tricky_result("pg-run")))

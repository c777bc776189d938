"""Runs of code in the sandbox, and the measurements timing labs print."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Index, Integer, Text
from sqlmodel import Field, SQLModel

from app.models.base import utcnow


class Run(SQLModel, table=True):
    """One execution of code in the sandbox: what ran where, and how it ended."""

    id: str = Field(primary_key=True, max_length=32)  # random hex; also the URL's id
    visitor: str = Field(index=True, max_length=64)  # a hash of the visitor's cookie or address
    # Whose run it is: the guest's or the user's learner; deleting the account deletes it.
    learner_id: int | None = Field(
        default=None, foreign_key="learner.id", index=True, ondelete="CASCADE"
    )
    # sha256 of a guest's client address: what a guest's in-flight runs per client are
    # counted by (None for a signed-in user's run: an account has limits of its own).
    client_sha256: str | None = Field(default=None, max_length=64, index=True)
    # Whom the sandbox shares its slots between (app/runs/runs.py fair_owner: a keyed hash of
    # the account, or of a guest's address); sent with each delivery of the run.
    fair_owner: str | None = Field(default=None, max_length=64)
    # A cookie-less API client owns its run through a capability token; only its digest.
    token_sha256: str | None = Field(default=None, max_length=64)
    # The web process that drives the run ("host:pid:start"), so that one starting up can
    # tell the runs a crashed process left behind from those another process still drives.
    driver: str = Field(default="", max_length=160)
    item_id: int | None = Field(default=None, foreign_key="item.id", ondelete="SET NULL")
    sample_index: int | None = None
    code_sha256: str = Field(max_length=64)
    code_bytes: int
    # The code as it ran (at most the run body's limit, 160 KiB): the run history shows it.
    code: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    backend_requested: str = Field(max_length=8)
    backend: str | None = Field(default=None, max_length=8)
    device: str | None = Field(default=None, max_length=200)
    status: str = Field(default="queued", max_length=16)  # queued, running, done
    # Deliveries to a worker so far. With a fleet, a run whose worker died before starting it
    # is delivered once more; the count lets only one delivery move it on (compare-and-set).
    attempt: int = Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))
    # The fleet's delivery that started it ("entry id/deliveries"): asked again by that
    # delivery, the database answers yes again, and no to every other (app/runs/runs.py).
    delivery: str | None = Field(default=None, max_length=80)
    # A client's Idempotency-Key for POST /api/runs: the same key from the same owner gives
    # the same run rather than a second one.
    idempotency_key: str | None = Field(default=None, max_length=64)
    started_at: datetime | None = None
    verdict: str | None = Field(default=None, max_length=16)
    exit_code: int | None = None
    stdout: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    stderr: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    detail: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    truncated: bool = False
    wall_ms: int | None = None
    cpu_ms: int | None = None
    max_memory_mb: int | None = None
    created_at: datetime = Field(default_factory=utcnow, index=True)
    finished_at: datetime | None = None
    # A submission to a code exercise: a run with a grading payload (sandbox/README.md,
    # "Grading"). `grading` keeps the grader's report as JSON: verdict, score, every test.
    exercise_slug: str | None = Field(default=None, max_length=80, index=True)
    grading_mode: str | None = Field(default=None, max_length=8)  # run | submit
    grading_verdict: str | None = Field(default=None, max_length=16)
    score: float | None = None
    grading: str | None = Field(default=None, sa_column=Column(Text, nullable=True))

    __table_args__ = (
        Index("ux_run_visitor_idempotency_key", "visitor", "idempotency_key", unique=True),
    )


class LabMeasurement(SQLModel, table=True):
    """One eager-versus-compiled comparison a lab printed (backprop_lab's result line),
    kept only from a run of the lab's own code, so nobody's edited code can claim a result."""

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(foreign_key="run.id", index=True, ondelete="CASCADE")
    item_id: int = Field(foreign_key="item.id", index=True, ondelete="CASCADE")
    label: str = Field(max_length=200)
    device: str = Field(max_length=200)
    backend: str = Field(max_length=8)
    verdict: str = Field(max_length=40)
    speedup: float
    eager_ms: float
    compiled_ms: float
    result: str = Field(sa_column=Column(Text, nullable=False))  # the whole result, as JSON
    measured_at: datetime = Field(default_factory=utcnow, index=True)

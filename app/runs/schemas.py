"""Runs as the API takes and shows them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from app.models import Run
from app.runs.runs import Submitted
from sandbox.protocol import MAX_CODE_BYTES


class RunCreate(BaseModel):
    """Code to run. `item` and `sample` say which sample it came from, when it did."""

    code: str = Field(description=f"Python source, at most {MAX_CODE_BYTES // 1024} KiB of UTF-8.")
    backend: Literal["cpu", "cuda", "auto"] = "auto"
    item: str | None = Field(None, max_length=120, description="Slug of the item.")
    sample: int | None = Field(None, ge=1, le=100, description="Sample number in the item.")


class RunAccepted(BaseModel):
    id: str
    status: str
    token: str | None = Field(
        None,
        description="Only for a client without cookies or a bearer token: the run's "
        "capability. Send it as the X-Run-Token header (or ?token= for EventSource) to read, "
        "follow or cancel the run; nobody else can.",
    )

    @classmethod
    def of(cls, submitted: Submitted) -> RunAccepted:
        return cls(id=submitted.run.id, status=submitted.run.status, token=submitted.token)


class RunPublic(BaseModel):
    """A run as stored; `verdict` is null until it has ended."""

    id: str
    status: str
    verdict: str | None
    exit_code: int | None
    stdout: str
    stderr: str
    detail: str
    truncated: bool
    wall_ms: int | None
    cpu_ms: int | None
    max_memory_mb: int | None
    backend: str | None
    device: str | None

    @classmethod
    def of(cls, run: Run) -> RunPublic:
        """Never the visitor key or the code."""
        return cls.model_validate(run, from_attributes=True)

"""What every API answer shares: the error body, the documented errors, the health check."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from sandbox.protocol import WorkerStatus


class ErrorBody(BaseModel):
    """An error: a sentence, or (for invalid parameters) the list of what was wrong."""

    detail: str | list[dict[str, Any]]
    verdict: str | None = Field(None, description="`rejected`, for code that will never run.")
    field: str | None = Field(
        None, description="The field to fix, when one was wrong (sign-up: `username`, `password`)."
    )


ERROR_MEANINGS = {
    400: "A body that cannot be read as JSON in UTF-8; for runs, code that will never run "
    "(the sandbox's `rejected` verdict).",
    401: "No valid credentials: a bearer token from POST /api/token, or a session cookie.",
    403: "A browser request without this page's CSRF token.",
    404: "No such item or run (someone else's run answers the same).",
    409: "The name is taken, or the request does not fit the current state (a closed quiz or "
    "coding round; no hint left; a solution asked for before a failed submission or giving "
    "up; a hint or solution while a coding round on its exercise runs).",
    413: "The request body is larger than this address accepts.",
    422: "Values that are not valid here; the detail says which.",
    429: "Too many attempts; Retry-After says when to try again.",
    503: "No code runner can take it now; Retry-After says when to try again.",
}


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The documented error answers of an operation, all of one shape."""
    return {s: {"model": ErrorBody, "description": ERROR_MEANINGS[s]} for s in statuses}


class Health(BaseModel):
    status: str
    database: str
    sandbox: WorkerStatus

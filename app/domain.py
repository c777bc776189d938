"""Framework-free types every layer may use: who is asking, whose data a call touches, the
vocabularies content is written in, and the one tree of domain errors.

Each error carries what an answer needs (its HTTP status, headers such as `Retry-After`,
extra JSON fields), so one exception handler at the edge renders any of them as a page, a
fragment or JSON, and no service knows about HTTP beyond those numbers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlmodel import Session

# Vocabularies: defined once, used by the importer, the services and the templates.


class Difficulty(StrEnum):
    beginner = "beginner"
    intermediate = "intermediate"
    advanced = "advanced"


class Requirement(StrEnum):
    """What a code sample needs beyond a CPU and torch, as content files declare it."""

    cuda = "cuda"  # an NVIDIA GPU
    torchvision = "torchvision"
    network = "network"  # downloads weights or data: never available in the sandbox
    long = "long"  # runs longer than a sandbox run may
    incomplete = "incomplete"  # placeholders such as `...`
    broken = "broken"  # a bug in the printed code


# Who is asking, and whose data a call may touch.


@dataclass(frozen=True, slots=True)
class Identity:
    """The person behind a request. `visitor` is always set (a hash of the browser's cookie,
    or of the client's address when it sends none); `user_id` when signed in."""

    visitor: str
    user_id: int | None = None
    username: str | None = None
    session_token: str | None = None  # the browser's sign-in cookie, when it is valid
    known_browser: bool = False  # it sent a visitor cookie: it will be recognised next time

    @property
    def signed_in(self) -> bool:
        return self.user_id is not None

    @property
    def may_have_records(self) -> bool:
        """Whether anything can have been recorded for them: an account, or a browser that
        keeps cookies. A browser's first request, or a client that keeps none, has nothing:
        no query need ask."""
        return self.signed_in or self.known_browser

    @property
    def owner_key(self) -> str:
        """What per-person limits count against: the account when there is one."""
        return f"user:{self.user_id}" if self.user_id is not None else self.visitor


@dataclass(frozen=True, slots=True)
class LearnerScope:
    """One learner's data in one session. Every personal-data function takes it first and
    filters every query by `learner_id`, so no call can reach another person's rows."""

    session: Session
    learner_id: int


# Ids start at 1: a scope bound to 0 finds no rows (never None, which would match the runs
# that have no learner). It is what someone who has recorded nothing reads through.
NOBODY = 0


# The error tree.


class DomainError(Exception):
    """A request that cannot be served as asked. `status` is the HTTP status."""

    status = 400

    def __init__(
        self,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.headers: dict[str, str] = dict(headers or {})
        self.extra: dict[str, Any] = dict(extra or {})  # more JSON fields beside "detail"


class NotFound(DomainError):
    status = 404


class ItemNotFound(NotFound):
    def __init__(self, slug: str) -> None:
        super().__init__(f"No item is called '{slug}'.")
        self.slug = slug


class RunNotFound(NotFound):
    def __init__(self, run_id: str) -> None:
        super().__init__(f"No run has the id '{run_id}'.")


class InvalidInput(DomainError):
    """Values that are well-formed but not acceptable (a filter, a note, a prompt number)."""

    status = 422


class InvalidFilter(InvalidInput):
    """A filter names a deck, topic, difficulty or progress state that does not exist."""


class NoteTooLong(InvalidInput):
    def __init__(self, length: int, limit: int) -> None:
        super().__init__(
            f"A note holds at most {limit:,} characters; this one has {length:,}. "
            "Nothing was saved."
        )


class UnknownPrompt(InvalidInput):
    """A recall check names a prompt the item does not have."""


class AccountError(InvalidInput):
    """A sign-up, sign-in or password change that cannot be done as asked. `field` names the
    form field that was wrong, when one was: a form focuses it and keeps the others."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message, extra={"field": field} if field else None)
        self.field = field


class Unauthenticated(DomainError):
    """No valid credentials; API answers say how to get them."""

    status = 401

    def __init__(self, message: str, *, bearer_error: str | None = None) -> None:
        challenge = f'Bearer error="{bearer_error}"' if bearer_error else "Bearer"
        super().__init__(message, headers={"WWW-Authenticate": challenge})


class SignInRequired(Unauthenticated):
    """A personal page or API call without a signed-in user: pages send people to sign in."""

    def __init__(self) -> None:
        super().__init__("Authentication required: send a bearer token from POST /api/token.")


class BadCredentials(Unauthenticated):
    def __init__(self) -> None:
        super().__init__(
            "That username and password do not match an account.", bearer_error="invalid_token"
        )


class InvalidToken(Unauthenticated):
    """A bearer token that is unknown or expired."""

    def __init__(self, message: str) -> None:
        super().__init__(message, bearer_error="invalid_token")


class NotAllowed(DomainError):
    """Signed in, but this account may not do that."""

    status = 403


class CsrfRefused(DomainError):
    status = 403

    def __init__(self) -> None:
        super().__init__(
            "This form was not sent from a current Backprop page (its security token is "
            "missing or out of date), so nothing was changed. Reload the page and try again."
        )


class RateLimited(DomainError):
    """Too many attempts; `retry_after_seconds` says when to try again."""

    status = 429

    def __init__(self, message: str, retry_after_seconds: int) -> None:
        super().__init__(message, headers={"Retry-After": str(retry_after_seconds)})
        self.retry_after_seconds = retry_after_seconds


class RunRejected(DomainError):
    """The code cannot be run at all (too large, not UTF-8, unknown backend, bad JSON)."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message, extra={"verdict": "rejected"})


class SandboxBusy(DomainError):
    """The worker's queue is full, or the worker is down: try again shortly."""

    status = 503

    def __init__(self, message: str, retry_after_seconds: int = 5) -> None:
        super().__init__(message, headers={"Retry-After": str(retry_after_seconds)})
        self.retry_after_seconds = retry_after_seconds


def wait_in_words(seconds: float) -> str:
    """'40 s' or '3 minutes': how long a limit asks someone to wait."""
    whole = max(1, math.ceil(seconds))
    return f"{whole} s" if whole < 120 else f"{math.ceil(whole / 60)} minutes"


# An edited sample or exercise kept as a draft: well over any sample, under the request body
# limit.
MAX_DRAFT_CHARACTERS = 50_000

"""Typed dependencies: what a handler needs, visible in its signature.

The only module that reads `request.app.state`: the app factory puts one `AppState` there,
and everything a handler may ask for comes out of it through an `Annotated` alias below."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, TypeVar

from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials
from sqlalchemy import Connection
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.accounts.accounts import AccountGuards
from app.db import close_off_loop
from app.domain import Identity, LearnerScope, NotAllowed, SignInRequired
from app.models import User
from app.platform import learners
from app.platform.ratelimit import RunLimiter
from app.progress.visit_writer import VisitWriter
from app.runqueue import RunQueue
from app.runs.stream_slots import StreamSlots
from app.settings import Settings
from app.study import review
from app.web import identity as web_identity
from app.web.cookies import VISITOR_COOKIE

Read = TypeVar("Read")


@dataclass
class AppState:
    """Everything an app instance holds for its requests (built by app.main.create_app)."""

    settings: Settings
    # Now, in UTC, by the database's clock (app.db.DatabaseClock); tests set their own.
    clock: Callable[[], datetime]
    engine: Engine
    run_queue: RunQueue
    run_limiter: RunLimiter
    stream_slots: StreamSlots
    account_guards: AccountGuards
    visits: VisitWriter  # page views, written in groups


def app_state(request: Request) -> AppState:
    state: AppState = request.app.state.backprop
    return state


async def _settings(request: Request) -> Settings:
    return app_state(request).settings


async def _engine(request: Request) -> Engine:
    return app_state(request).engine


async def _session(request: Request) -> AsyncIterator[Session]:
    """One session per request, for the plain `def` handlers and dependencies that query
    through it (FastAPI runs those in its thread pool). Making it costs no I/O, so it is made
    here; it ends as soon as the handler returns (scope "function"), in a thread when it
    still holds a connection (app.db.close_off_loop)."""
    session = Session(app_state(request).engine)
    try:
        yield session
    finally:
        await close_off_loop(session)


def _now(request: Request) -> datetime:
    # Plain `def`: on PostgreSQL the clock asks the database.
    return app_state(request).clock()


SettingsDep = Annotated[Settings, Depends(_settings)]
NowDep = Annotated[datetime, Depends(_now)]
EngineDep = Annotated[Engine, Depends(_engine)]
SessionDep = Annotated[Session, Depends(_session, scope="function")]


async def _run_queue(request: Request) -> RunQueue:
    return app_state(request).run_queue


async def _run_limiter(request: Request) -> RunLimiter:
    return app_state(request).run_limiter


async def _account_guards(request: Request) -> AccountGuards:
    return app_state(request).account_guards


async def _stream_slots(request: Request) -> StreamSlots:
    return app_state(request).stream_slots


async def _visits(request: Request) -> VisitWriter:
    return app_state(request).visits


RunQueueDep = Annotated[RunQueue, Depends(_run_queue)]
VisitsDep = Annotated[VisitWriter, Depends(_visits)]
StreamSlotsDep = Annotated[StreamSlots, Depends(_stream_slots)]
RunLimiterDep = Annotated[RunLimiter, Depends(_run_limiter)]
AccountGuardsDep = Annotated[AccountGuards, Depends(_account_guards)]


BearerDep = Annotated[HTTPAuthorizationCredentials | None, Depends(web_identity.bearer_scheme)]
"""A bearer token, when the request sends one (for a handler that resolves the asker itself:
`identify_for_page_then`)."""


async def identify(request: Request, credentials: BearerDep) -> Identity:
    """Who is asking (at most one query), with CSRF enforced for browsers. Resolved once per
    request and kept on request.state, where templates read it."""
    return await _identify(request, credentials, count_due=False)


async def identify_for_page(request: Request, credentials: BearerDep) -> Identity:
    """`identify`, and for a browser that has recorded something, how many questions are
    due for review (the navigation's "Review (3 due)", kept on request.state for the
    templates): both in one thread hop, for the pages."""
    return await _identify(request, credentials, count_due=True)


async def identify_for_page_then(
    request: Request,
    credentials: HTTPAuthorizationCredentials | None,
    work: Callable[[Connection, Identity], tuple[Read, int]],
) -> Read:
    """Who asks, as `identify_for_page` says, then `work(connection, identity)` (a page's
    reading, blocking) in the same thread hop and on the same connection: a signed-in
    reader's page pays for one hand-over to a thread and one pooled connection, not two of
    each. `work` gives its reading and the asker's due count (the navigation's), which it
    reads with the rest. The identity is kept on request.state before `work` runs, so an
    error page that `work` raises still knows who is asking; the user's row is not read
    (request.state.user stays None): a page that needs it (`CurrentUser`) depends on
    `identify_for_page` instead."""
    await web_identity.check_csrf(request, bearer=credentials is not None)
    cached: Identity | None = getattr(request.state, "identity", None)
    state = app_state(request)

    def look_up_then_work() -> Read:
        with state.engine.connect() as connection:
            identity = cached
            if identity is None:
                identity = web_identity.resolve_owner(request, credentials, connection)
                _keep(request, identity, None, due=0)
            read, request.state.due_for_review = work(connection, identity)
        return read

    return await asyncio.to_thread(look_up_then_work)


def navigation_due(connection: Connection, identity: Identity, now: Callable[[], datetime]) -> int:
    """The navigation's count of questions due for review, for a page that reads it with the
    rest (`identify_for_page_then`): no query for a browser that has recorded nothing."""
    return review.due_for(connection, identity, now=now()) if identity.may_have_records else 0


async def _identify(
    request: Request, credentials: HTTPAuthorizationCredentials | None, *, count_due: bool
) -> Identity:
    cached: Identity | None = getattr(request.state, "identity", None)
    if cached is not None:
        return cached
    await web_identity.check_csrf(request, bearer=credentials is not None)
    state = app_state(request)
    if _needs_thread(request, credentials, count_due=count_due):
        return await asyncio.to_thread(_look_up, state, request, credentials, count_due)
    return _resolve_guest(request)


def _needs_thread(
    request: Request, credentials: HTTPAuthorizationCredentials | None, *, count_due: bool
) -> bool:
    """Whether resolving the asker asks the database: a session cookie or a bearer token,
    or (for the due count) a browser that has recorded something."""
    return web_identity.needs_lookup(request, credentials) or (
        count_due and VISITOR_COOKIE in request.cookies
    )


def _resolve_guest(request: Request) -> Identity:
    """A guest on its first request: nothing to look up, nothing recorded."""
    identity, user = web_identity.resolve(request, None, None)
    _keep(request, identity, user, due=0)
    return identity


def _keep(request: Request, identity: Identity, user: User | None, *, due: int) -> None:
    """Where the templates and `CurrentUser` find the asker (set from the request's own
    thread hop while the loop awaits it: nothing else touches this request meanwhile)."""
    request.state.identity, request.state.user = identity, user
    request.state.due_for_review = due


def _look_up(
    state: AppState,
    request: Request,
    credentials: HTTPAuthorizationCredentials | None,
    count_due: bool,
) -> Identity:
    identity, user = web_identity.resolve(request, credentials, state.engine)
    due = 0
    if count_due and identity.may_have_records:
        with state.engine.connect() as connection:
            due = navigation_due(connection, identity, state.clock)
    _keep(request, identity, user, due=due)
    return identity


IdentityDep = Annotated[Identity, Depends(identify)]
# Starting a run (POST /api/runs, POST /api/labs/{slug}/runs) may name itself, to be retried.
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description=(
            "Up to 64 letters, digits, '-', '_', '.' or ':' (a UUID, say) naming this request: "
            "sent again by the same owner, it answers with the same run instead of starting "
            "another."
        ),
    ),
]


async def _current_user(request: Request, identity: IdentityDep) -> User:
    user: User | None = request.state.user
    if user is None:
        raise SignInRequired()
    return user


CurrentUser = Annotated[User, Depends(_current_user)]


async def _admin(user: CurrentUser) -> User:
    if not user.is_admin:
        raise NotAllowed(
            "Only an admin may see this page (an operator grants it with "
            "`backprop admin grant USERNAME`)."
        )
    return user


AdminUser = Annotated[User, Depends(_admin)]


# The learner dependencies query, so they are plain `def` (run in the thread pool). Each
# ends its read transaction before returning, so no connection stays checked out while
# FastAPI moves on to the handler, whose queries check one out again. The one exception is
# a learner made on first need (a new guest's first change): it belongs to the handler's
# transaction, so that a change refused later leaves nothing behind.


def _learner(session: SessionDep, identity: IdentityDep, visits: VisitsDep) -> LearnerScope | None:
    visits.flush_before_reading()  # reads include repeat visits not yet written
    scope = learners.resolve(session, identity)
    session.commit()
    return scope


def _reader(session: SessionDep, identity: IdentityDep, visits: VisitsDep) -> LearnerScope:
    visits.flush_before_reading()
    scope = learners.for_reading(session, identity)
    session.commit()
    return scope


def _writer(session: SessionDep, identity: IdentityDep, visits: VisitsDep) -> LearnerScope:
    visits.flush_before_reading()
    scope = learners.resolve(session, identity)
    if scope is not None:
        session.commit()
        return scope
    return learners.resolve_or_create(session, identity)


LearnerDep = Annotated[LearnerScope | None, Depends(_learner)]
"""The asker's data, or None when they have recorded nothing yet."""
ReaderDep = Annotated[LearnerScope, Depends(_reader)]
"""The asker's data for reading (empty for someone with none)."""
WriterDep = Annotated[LearnerScope, Depends(_writer)]
"""The asker's data for a change: their learner is created on first need."""


async def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


ClientDep = Annotated[str, Depends(client_address)]

"""Who is asking: a user (session cookie or bearer token) or a guest (visitor cookie), and
the CSRF check that proves a browser's state-changing request came from our own pages.

`app/deps.py` resolves this once per request and keeps it on `request.state`, where the
templates read it too."""

from __future__ import annotations

from fastapi import Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import Connection
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.accounts import credentials as credentials_service
from app.accounts.credentials import Owner
from app.domain import CsrfRefused, Identity
from app.models import User
from app.web.cookies import SESSION_COOKIE, VISITOR_COOKIE, csrf_matches, visitor_key

CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# API calls that take credentials in the request itself and return them in the body, which
# another site cannot read: cookies give them no authority to borrow.
CSRF_EXEMPT_API = frozenset({"/api/token", "/api/users"})
bearer_scheme = HTTPBearer(auto_error=False, description="A token from POST /api/token.")


async def check_csrf(request: Request, *, bearer: bool) -> None:
    """Refuse a state-changing request that a browser could have been tricked into sending.

    Pages' forms always need the token. An /api request needs it only when it rides on
    cookies: a bearer token or no credentials at all give another site nothing to borrow."""
    if request.method not in UNSAFE_METHODS:
        return
    is_api = request.url.path.startswith("/api/")
    if is_api and (bearer or not request.cookies or request.url.path in CSRF_EXEMPT_API):
        return
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and not is_api:
        content_type = request.headers.get("content-type", "")
        if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            value = (await request.form()).get(CSRF_FIELD)
            sent = value if isinstance(value, str) else None
    if not sent or not csrf_matches(request, sent):
        raise CsrfRefused()


def needs_lookup(request: Request, credentials: HTTPAuthorizationCredentials | None) -> bool:
    """Whether resolving this request's identity asks the database (a session cookie or a
    bearer token); a guest's does not."""
    return credentials is not None or bool(request.cookies.get(SESSION_COOKIE))


def resolve(
    request: Request, credentials: HTTPAuthorizationCredentials | None, engine: Engine | None
) -> tuple[Identity, User | None]:
    """The identity behind the request and its user row (at most one query, in a session of
    its own; blocking when `needs_lookup`, so call it in a thread then). A bearer header
    that is not valid is an error, never a fall-back to cookies."""
    token = request.cookies.get(SESSION_COOKIE)
    user: User | None = None
    session_token: str | None = None
    if credentials is not None:
        with Session(engine) as session:
            user = credentials_service.user_of_token(session, credentials.credentials)
    elif token:
        with Session(engine) as session:
            user = credentials_service.user_of_session(session, token)
        session_token = token if user else None
    owner = Owner(user.id, user.username) if user is not None and user.id else None
    return _identity(request, owner, session_token), user


def resolve_owner(
    request: Request, credentials: HTTPAuthorizationCredentials | None, connection: Connection
) -> Identity:
    """`resolve` without the user row, for a page that needs none: at most one query, for
    plain columns, on the page's own `connection` (blocking, as `resolve`): the page reads
    the rest on it, and pays for one connection rather than two."""
    token = request.cookies.get(SESSION_COOKIE)
    owner: Owner | None = None
    session_token: str | None = None
    if credentials is not None:
        owner = credentials_service.owner_of_token(connection, credentials.credentials)
    elif token:
        owner = credentials_service.owner_of_session(connection, token)
        session_token = token if owner else None
    return _identity(request, owner, session_token)


def _identity(request: Request, owner: Owner | None, session_token: str | None) -> Identity:
    return Identity(
        visitor=visitor_key(request),
        user_id=owner.user_id if owner else None,
        username=owner.username if owner else None,
        session_token=session_token,
        known_browser=VISITOR_COOKIE in request.cookies,
    )

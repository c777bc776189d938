"""Who is asking: a user (session cookie or bearer token) or a guest (visitor cookie), and
the CSRF token that proves a browser's form came from our own pages.

Resolved once per request by `identify` (a dependency of every page and personal-data API
route) and kept on `request.state.identity`, where templates read it too."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlmodel import Session

from app.errors import DomainError
from app.models import User
from app.services import accounts
from app.visitors import COOKIE as VISITOR_COOKIE
from app.visitors import visitor_key

SESSION_COOKIE = "backprop_session"
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# API calls that take credentials in the request itself and return them in the body, which
# another site cannot read: cookies give them no authority to borrow.
CSRF_EXEMPT_API = frozenset({"/api/token", "/api/users"})
_bearer = HTTPBearer(auto_error=False, description="A token from POST /api/token.")


class CsrfRefused(DomainError):
    status = 403

    def __init__(self) -> None:
        super().__init__(
            "This form was not sent from a current Backprop page (its security token is "
            "missing or out of date), so nothing was changed. Reload the page and try again."
        )


class SignInRequired(DomainError):
    status = 401

    def __init__(self) -> None:
        super().__init__("Sign in to see this page.")


@dataclass(frozen=True)
class Identity:
    """The person behind a request. `visitor` is always set; `user` when signed in."""

    visitor: str
    user: User | None
    session_token: str | None  # the browser's sign-in cookie, when it has a valid one

    @property
    def owner_key(self) -> str:
        """What per-person limits count against: the account when there is one."""
        return f"user:{self.user.id}" if self.user else self.visitor


def csrf_token(request: Request) -> str:
    """A token bound to this browser's visitor and sign-in cookies, signed with the secret
    key: another site can neither read it nor forge it, and signing in or out changes it."""
    visitor = request.cookies.get(VISITOR_COOKIE) or request.scope.get("backprop.new_visitor", "")
    session = request.cookies.get(SESSION_COOKIE, "")
    cached: str | None = getattr(request.state, "csrf_token", None)
    if cached is None:  # a page puts it in every form: compute it once per request
        key = request.app.state.secret_key.encode()
        message = f"{visitor}|{session}".encode()
        cached = request.state.csrf_token = hmac.new(key, message, hashlib.sha256).hexdigest()[:40]
    return cached


async def _check_csrf(request: Request, bearer: bool) -> None:
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
    if not sent or not hmac.compare_digest(sent, csrf_token(request)):
        raise CsrfRefused()


async def identify(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Identity:
    """Resolve who is asking (at most one query) and enforce CSRF for browsers. A session
    of its own, opened only for a cookie or token: most requests need no database here."""
    cached: Identity | None = getattr(request.state, "identity", None)
    if cached is not None:
        return cached
    await _check_csrf(request, bearer=credentials is not None)
    visitor = visitor_key(request)
    token = request.cookies.get(SESSION_COOKIE)
    if credentials is not None:
        with Session(request.app.state.engine) as session:
            bearer = accounts.user_of_token(session, credentials.credentials)
        identity = Identity(visitor=visitor, user=bearer, session_token=None)
    elif token:
        with Session(request.app.state.engine) as session:
            user = accounts.user_of_session(session, token)
        identity = Identity(visitor=visitor, user=user, session_token=token if user else None)
    else:
        identity = Identity(visitor=visitor, user=None, session_token=None)
    request.state.identity = identity
    return identity


IdentityDep = Annotated[Identity, Depends(identify)]


async def require_user(identity: IdentityDep) -> User:
    if identity.user is None:
        raise SignInRequired()
    return identity.user


CurrentUser = Annotated[User, Depends(require_user)]

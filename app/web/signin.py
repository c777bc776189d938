"""Signing a browser in: the session cookie, carrying the guest's data into the account,
and where to go next. Shared by sign-in, sign-up and recovery (app/accounts/routes)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import RedirectResponse, Response
from sqlmodel import Session

from app.accounts import accounts, merge
from app.accounts.passwords import MAX_PASSWORD_LENGTH
from app.domain import DomainError, Identity
from app.models import User
from app.progress.visit_writer import VisitWriter
from app.settings import Settings
from app.web.cookies import SESSION_COOKIE
from app.web.templating import render

# A password field: one character over the longest password, so that the service says
# "too long" in words rather than the form failing validation.
PasswordField = Annotated[str, Form(max_length=MAX_PASSWORD_LENGTH + 1)]


def form_again(
    request: Request,
    page: str,
    exc: DomainError,
    *,
    username: str,
    next: str = "",
    password: str | None = None,
) -> Response:
    """An account form once more, with what went wrong, the wrong field focused and the rest
    kept. A password is sent back only when it was right and the username was not (a sign-up
    with a taken name): the answer is never stored (Cache-Control: no-store)."""
    field = getattr(exc, "field", None)
    context = {
        "next": next,
        "error": exc.message,
        "error_field": field,
        "username": username,
        "password": password if field == "username" else None,
    }
    return render(request, page, context, status_code=exc.status, headers=exc.headers)


def safe_next(target: str | None, default: str = "/dashboard") -> str:
    """Only a path on this site: never `//host` or `https://...`, which would send people
    elsewhere after signing in."""
    # Back to the form itself would loop: signed-in people are sent on from there.
    if target and target.startswith("/") and not target.startswith(("//", "/\\", "/sign")):
        return target
    return default


def signed_in(
    request: Request,
    session: Session,
    identity: Identity,
    user: User,
    settings: Settings,
    target: str,
    visits: VisitWriter,
    response: Response | None = None,
) -> Response:
    """Carry the guest's data in, start a new session (rotated at sign-in) and go on: to
    `target`, or with `response` (a page to show first) when given."""
    # The guest's repeat visits not written yet are carried in too: written in this
    # transaction, which may hold the database's write already (a new account).
    visits.flush(into=session.connection())
    if identity.session_token:
        accounts.end_session(session, identity.session_token)
    assert user.id is not None
    merge.carry_guest_into_account(session, visitor=identity.visitor, user_id=user.id)
    token = accounts.start_session(session, user=user, days=settings.session_days)
    session.commit()
    response = response or RedirectResponse(target, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=settings.session_days * 24 * 3600,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response

"""Accounts in the browser: sign up, sign in, sign out, and the account page (password,
export, deletion). Plain forms that redirect after success, so they work without scripts."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts import accounts, recovery
from app.accounts.export import export
from app.deps import (
    AccountGuardsDep,
    ClientDep,
    CurrentUser,
    IdentityDep,
    ReaderDep,
    SessionDep,
    SettingsDep,
    VisitsDep,
    identify,
)
from app.domain import DomainError
from app.models import User
from app.web.cookies import SESSION_COOKIE
from app.web.signin import PasswordField, form_again, safe_next, signed_in
from app.web.templating import render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify)])
NextField = Annotated[str | None, Form(max_length=500)]


@router.get("/signup")
def signup_page(request: Request, identity: IdentityDep, next: str | None = None) -> Response:
    """The sign-up form."""
    if identity.signed_in:
        return RedirectResponse(safe_next(next), status_code=303)
    return render(request, "accounts/signup.html", {"next": safe_next(next), "error": None})


@router.post("/signup")
def signup(
    request: Request,
    session: SessionDep,
    identity: IdentityDep,
    settings: SettingsDep,
    guards: AccountGuardsDep,
    client: ClientDep,
    visits: VisitsDep,
    username: Annotated[str, Form(max_length=200)],
    password: PasswordField,
    next: NextField = None,
) -> Response:
    """Create the account, carry this browser's guest progress into it, and sign in."""
    target = safe_next(next)
    try:
        user = accounts.sign_up(
            session, guards, username=username, password=password, client=client
        )
    except DomainError as exc:
        session.rollback()
        return form_again(
            request,
            "accounts/signup.html",
            exc,
            next=target,
            username=username,
            password=password,
        )
    # The recovery codes are shown once, now, before going on (they are kept only hashed).
    codes = recovery.issue(session, user)
    page = render(request, "accounts/recovery_codes.html", {"codes": codes, "next": target})
    return signed_in(request, session, identity, user, settings, target, visits, response=page)


@router.get("/signin")
def signin_page(request: Request, identity: IdentityDep, next: str | None = None) -> Response:
    """The sign-in form."""
    if identity.signed_in:
        return RedirectResponse(safe_next(next), status_code=303)
    return render(request, "accounts/signin.html", {"next": safe_next(next), "error": None})


@router.post("/signin")
def signin(
    request: Request,
    session: SessionDep,
    identity: IdentityDep,
    settings: SettingsDep,
    guards: AccountGuardsDep,
    client: ClientDep,
    visits: VisitsDep,
    username: Annotated[str, Form(max_length=200)],
    password: PasswordField,
    next: NextField = None,
) -> Response:
    """Check the password; start a new session (ending the old one) and merge guest data."""
    target = safe_next(next)
    try:
        user = accounts.sign_in(
            session, guards, username=username, password=password, client=client
        )
    except DomainError as exc:
        session.rollback()
        return form_again(request, "accounts/signin.html", exc, next=target, username=username)
    return signed_in(request, session, identity, user, settings, target, visits)


@router.post("/signout")
def signout(session: SessionDep, identity: IdentityDep) -> Response:
    """End this browser's session."""
    if identity.session_token:
        accounts.end_session(session, identity.session_token)
        session.commit()
    response = RedirectResponse("/?done=signed-out", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


def _account_page(
    request: Request, user: User, *, message: str | None = None, error: DomainError | None = None
) -> HTMLResponse:
    context = {"user": user, "message": message, "error": error.message if error else None}
    status, headers = (error.status, error.headers) if error else (200, {})
    return render(request, "accounts/account.html", context, status_code=status, headers=headers)


@router.get("/account")
def account_page(
    request: Request, user: CurrentUser, done: Annotated[str | None, Query(max_length=32)] = None
) -> HTMLResponse:
    """Password, review steps, recovery codes, export and deletion."""
    message = (
        "Your new password is set; every other session has ended."
        if done == "password-reset"
        else None
    )
    return _account_page(request, user, message=message)


@router.post("/account/password")
def change_password(
    request: Request,
    session: SessionDep,
    identity: IdentityDep,
    user: CurrentUser,
    guards: AccountGuardsDep,
    client: ClientDep,
    current_password: PasswordField,
    new_password: PasswordField,
) -> HTMLResponse:
    """A new password; every other browser and every API token is signed out."""
    try:
        accounts.change_password(
            session,
            guards,
            user=session.merge(user),
            current=current_password,
            new=new_password,
            keep_session=identity.session_token,
            client=client,
        )
    except DomainError as exc:
        session.rollback()
        return _account_page(request, user, error=exc)
    session.commit()
    message = "Password changed. Every other browser and API token has been signed out."
    return _account_page(request, user, message=message)


@router.post("/account/review-steps")
def review_steps(
    request: Request,
    session: SessionDep,
    user: CurrentUser,
    short_learning_steps: Annotated[bool, Form()] = False,
) -> HTMLResponse:
    """Short learning steps in spaced review, on (the box ticked) or off."""
    user = session.merge(user)
    accounts.set_short_learning_steps(session, user=user, on=short_learning_steps)
    session.commit()
    message = (
        "Short learning steps are on: a new question answered right comes back within the day."
        if short_learning_steps
        else "Short learning steps are off: a right answer waits at least a day."
    )
    return _account_page(request, user, message=message)


@router.get("/account/export")
def export_download(scope: ReaderDep, user: CurrentUser) -> Response:
    """Everything stored about the account, as a JSON download."""
    body = export(scope, user)
    return Response(
        json.dumps(body, indent=2, ensure_ascii=False),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="backprop-{user.username}.json"'},
    )


@router.post("/account/delete")
def delete_account(
    request: Request,
    session: SessionDep,
    user: CurrentUser,
    guards: AccountGuardsDep,
    client: ClientDep,
    password: PasswordField,
) -> Response:
    """Delete the account and everything attached to it, after the password is confirmed."""
    try:
        accounts.delete_account(session, guards, user=user, password=password, client=client)
    except DomainError as exc:
        return _account_page(request, user, error=exc)
    session.commit()
    response = RedirectResponse("/?done=deleted", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response

"""Accounts in the browser: sign up, sign in, sign out, and the account page (password,
export, deletion). Plain forms that redirect after success, so they work without scripts."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.db import SessionDep
from app.errors import DomainError
from app.identity import SESSION_COOKIE, CurrentUser, IdentityDep, identify
from app.services import accounts
from app.services.mine import carry_guest_into_account, mine_to_read
from app.services.ratelimit import AccountLimits, RateLimited
from app.web import render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify)])
FormText = Annotated[str, Form(max_length=accounts.MAX_PASSWORD_LENGTH + 1)]


def safe_next(target: str | None, default: str = "/dashboard") -> str:
    """Only a path on this site: never `//host` or `https://...`, which would send people
    elsewhere after signing in."""
    # Back to the form itself would loop: signed-in people are sent on from there.
    if target and target.startswith("/") and not target.startswith(("//", "/\\", "/sign")):
        return target
    return default


def limits_of(request: Request) -> AccountLimits:
    limits: AccountLimits = request.app.state.account_limits
    return limits


def client_key(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def sign_in_response(request: Request, token: str, target: str) -> RedirectResponse:
    """Go on to `target` with the new session cookie (a new token: rotated at sign-in)."""
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=request.app.state.settings.session_days * 24 * 3600,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response


def form_again(
    request: Request, page: str, exc: DomainError | RateLimited, *, next: str, username: str
) -> Response:
    """The form once more, with what went wrong and the username kept (never the password)."""
    status = exc.status if isinstance(exc, DomainError) else 429
    context = {"next": next, "error": exc.message, "username": username}
    response = render(request, page, context, status_code=status)
    if isinstance(exc, RateLimited):
        response.headers["Retry-After"] = str(exc.retry_after_seconds)
    return response


@router.get("/signup")
async def signup_page(request: Request, identity: IdentityDep, next: str | None = None) -> Response:
    """The sign-up form."""
    if identity.user:
        return RedirectResponse(safe_next(next), status_code=303)
    return render(request, "accounts/signup.html", {"next": safe_next(next), "error": None})


@router.post("/signup")
async def signup(
    request: Request,
    session: SessionDep,
    identity: IdentityDep,
    username: Annotated[str, Form(max_length=200)],
    password: FormText,
    next: Annotated[str | None, Form(max_length=500)] = None,
) -> Response:
    """Create the account, carry this browser's guest progress into it, and sign in."""
    target = safe_next(next)
    try:
        limits_of(request).sign_up_per_client.hit(client_key(request))
        user = accounts.create_user(session, username=username, password=password)
    except (DomainError, RateLimited) as exc:
        session.rollback()
        return form_again(request, "accounts/signup.html", exc, next=target, username=username)
    carry_guest_into_account(session, visitor=identity.visitor, user=user)
    token = accounts.start_session(session, user=user, days=request.app.state.settings.session_days)
    session.commit()
    return sign_in_response(request, token, target)


@router.get("/signin")
async def signin_page(request: Request, identity: IdentityDep, next: str | None = None) -> Response:
    """The sign-in form."""
    if identity.user:
        return RedirectResponse(safe_next(next), status_code=303)
    return render(request, "accounts/signin.html", {"next": safe_next(next), "error": None})


@router.post("/signin")
async def signin(
    request: Request,
    session: SessionDep,
    identity: IdentityDep,
    username: Annotated[str, Form(max_length=200)],
    password: FormText,
    next: Annotated[str | None, Form(max_length=500)] = None,
) -> Response:
    """Check the password; start a new session (ending the old one) and merge guest data."""
    target = safe_next(next)
    limits = limits_of(request)
    account = accounts.normalise_username(username)
    try:
        limits.sign_in_per_client.hit(client_key(request))
        limits.failures_per_account.check(account)
        try:
            user = accounts.authenticate(session, username=username, password=password)
        except accounts.BadCredentials:
            limits.failures_per_account.hit(account)
            raise
    except (DomainError, RateLimited) as exc:
        session.rollback()
        return form_again(request, "accounts/signin.html", exc, next=target, username=username)
    if identity.session_token:
        accounts.end_session(session, identity.session_token)
    carry_guest_into_account(session, visitor=identity.visitor, user=user)
    token = accounts.start_session(session, user=user, days=request.app.state.settings.session_days)
    session.commit()
    return sign_in_response(request, token, target)


@router.post("/signout")
async def signout(request: Request, session: SessionDep, identity: IdentityDep) -> Response:
    """End this browser's session."""
    if identity.session_token:
        accounts.end_session(session, identity.session_token)
        session.commit()
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/account")
async def account_page(request: Request, user: CurrentUser) -> HTMLResponse:
    """Password, export and deletion."""
    return render(request, "accounts/account.html", {"user": user, "message": None, "error": None})


@router.post("/account/password")
async def change_password(
    request: Request,
    session: SessionDep,
    identity: IdentityDep,
    user: CurrentUser,
    current_password: FormText,
    new_password: FormText,
) -> HTMLResponse:
    """A new password; every other browser and every API token is signed out."""
    try:
        accounts.change_password(
            session,
            user=user,
            current=current_password,
            new=new_password,
            keep_session=identity.session_token,
        )
    except DomainError as exc:
        session.rollback()
        return render(
            request,
            "accounts/account.html",
            {"user": user, "message": None, "error": exc.message},
            status_code=exc.status,
        )
    session.commit()
    message = "Password changed. Every other browser and API token has been signed out."
    return render(
        request, "accounts/account.html", {"user": user, "message": message, "error": None}
    )


@router.get("/account/export")
async def export(session: SessionDep, identity: IdentityDep, user: CurrentUser) -> Response:
    """Everything stored about the account, as a JSON download."""
    body = mine_to_read(session, identity).export(user)
    return Response(
        json.dumps(body, indent=2, ensure_ascii=False),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="backprop-{user.username}.json"'},
    )


@router.post("/account/delete")
async def delete_account(
    request: Request, session: SessionDep, user: CurrentUser, password: FormText
) -> Response:
    """Delete the account and everything attached to it, after the password is confirmed."""
    try:
        accounts.confirm_password(user, password)
    except DomainError as exc:
        return render(
            request,
            "accounts/account.html",
            {"user": user, "message": None, "error": exc.message},
            status_code=exc.status,
        )
    accounts.delete_user(session, user=session.merge(user))
    session.commit()
    response = RedirectResponse("/?deleted=1", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response

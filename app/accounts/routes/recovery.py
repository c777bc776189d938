"""Getting back into an account without its password: "Forgot password?" with a recovery
code, and making new codes from the account page (app/accounts/recovery.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts import accounts, recovery
from app.deps import (
    AccountGuardsDep,
    ClientDep,
    CurrentUser,
    IdentityDep,
    SessionDep,
    SettingsDep,
    VisitsDep,
    identify,
)
from app.domain import DomainError
from app.web.signin import PasswordField, form_again, signed_in
from app.web.templating import render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify)])


@router.get("/forgot")
def forgot_page(request: Request, identity: IdentityDep) -> Response:
    """The form that takes a recovery code and a new password."""
    if identity.signed_in:
        return RedirectResponse("/account", status_code=303)
    return render(request, "accounts/forgot.html", {"error": None, "username": ""})


@router.post("/forgot")
def forgot(
    request: Request,
    session: SessionDep,
    identity: IdentityDep,
    settings: SettingsDep,
    guards: AccountGuardsDep,
    client: ClientDep,
    visits: VisitsDep,
    username: Annotated[str, Form(max_length=200)],
    code: Annotated[str, Form(max_length=64)],
    new_password: PasswordField,
) -> Response:
    """Set the new password, use the code up, and sign this browser in."""
    try:
        user = recovery.reset_password(
            session,
            guards,
            username=username,
            code=code,
            new_password=new_password,
            client=client,
        )
    except DomainError as exc:
        session.rollback()
        return form_again(request, "accounts/forgot.html", exc, username=username)
    return signed_in(
        request, session, identity, user, settings, "/account?done=password-reset", visits
    )


@router.get("/account/recovery-codes")
def codes_page(request: Request, session: SessionDep, user: CurrentUser) -> HTMLResponse:
    """How many codes are left, and the form that makes new ones."""
    context = {"left": recovery.unused(session, user), "error": None}
    return render(request, "accounts/recovery.html", context)


@router.post("/account/recovery-codes")
def new_codes(
    request: Request,
    session: SessionDep,
    user: CurrentUser,
    guards: AccountGuardsDep,
    client: ClientDep,
    password: PasswordField,
) -> HTMLResponse:
    """New codes after the password is confirmed; the old ones stop working."""
    try:
        accounts.confirm_password(session, guards, user=user, password=password, client=client)
    except DomainError as exc:
        context = {"left": recovery.unused(session, user), "error": exc.message}
        return render(
            request, "accounts/recovery.html", context, status_code=exc.status, headers=exc.headers
        )
    codes = recovery.issue(session, session.merge(user))
    session.commit()
    return render(request, "accounts/recovery_codes.html", {"codes": codes, "next": "/account"})

"""The JSON API for accounts and personal data: create a user, get a bearer token, read and
change one's own progress, export it. Bearer token or session cookie alike."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.security import OAuth2PasswordRequestForm
from pydantic import BaseModel, Field

from app.db import SessionDep
from app.identity import CurrentUser, IdentityDep, identify
from app.routes.accounts import client_key, limits_of
from app.schemas import ErrorBody
from app.services import accounts, items
from app.services.catalogue import load_catalogue
from app.services.mine import MAX_NOTE_LENGTH, item_progress_public, mine, mine_to_read

router = APIRouter(prefix="/api", tags=["accounts"], dependencies=[Depends(identify)])
ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody},
    422: {"model": ErrorBody},
    429: {"model": ErrorBody},
}


class UserCreate(BaseModel):
    """A new account: a username (3-40 of a-z 0-9 . _ -) and a password of 8 or more."""

    username: str = Field(max_length=200)
    password: str = Field(max_length=accounts.MAX_PASSWORD_LENGTH + 1)


class UserPublic(BaseModel):
    id: int
    username: str
    created_at: datetime


class Token(BaseModel):
    access_token: str
    token_type: str = "bearer"
    expires_in: int = Field(description="Seconds until the token expires.")


class ItemProgressPublic(BaseModel):
    """One's own progress on one item."""

    item: str
    status: str
    bookmarked: bool
    note: str
    visits: int
    runs: int
    runs_ok: int


class ItemProgressUpdate(BaseModel):
    """Fields to change; those left out stay as they are."""

    bookmarked: bool | None = None
    note: str | None = Field(None, max_length=MAX_NOTE_LENGTH * 2)


@router.post("/users", status_code=201, responses={409: {"model": ErrorBody}, **ERRORS})
async def create_user(
    body: UserCreate, request: Request, session: SessionDep, identity: IdentityDep
) -> UserPublic:
    """Create an account. Sign in with POST /api/token."""
    limits_of(request).sign_up_per_client.hit(client_key(request))
    user = accounts.create_user(session, username=body.username, password=body.password)
    session.commit()
    assert user.id is not None
    return UserPublic(id=user.id, username=user.username, created_at=user.created_at)


@router.post("/token", responses=ERRORS)
async def token(
    form: Annotated[OAuth2PasswordRequestForm, Depends()], request: Request, session: SessionDep
) -> Token:
    """OAuth2 password flow: a bearer token for `Authorization: Bearer <token>`."""
    limits = limits_of(request)
    account = accounts.normalise_username(form.username)
    limits.sign_in_per_client.hit(client_key(request))
    limits.failures_per_account.check(account)
    try:
        user = accounts.authenticate(session, username=form.username, password=form.password)
    except accounts.BadCredentials:
        limits.failures_per_account.hit(account)
        raise
    minutes = request.app.state.settings.token_minutes
    value = accounts.issue_token(session, user=user, minutes=minutes)
    session.commit()
    return Token(access_token=value, expires_in=minutes * 60)


@router.get("/me", responses=ERRORS)
async def me(user: CurrentUser) -> UserPublic:
    """The account the token or cookie belongs to."""
    assert user.id is not None
    return UserPublic(id=user.id, username=user.username, created_at=user.created_at)


@router.get("/me/progress", responses=ERRORS)
async def my_progress(
    session: SessionDep, identity: IdentityDep, user: CurrentUser
) -> dict[str, Any]:
    """The dashboard's figures: status counts, per deck and topic, streak, activity, where to
    go on, bookmarks and recent runs."""
    return mine_to_read(session, identity).dashboard(load_catalogue(session)).public()


@router.get("/me/items/{slug}", responses={404: {"model": ErrorBody}, **ERRORS})
async def my_item(
    slug: str, session: SessionDep, identity: IdentityDep, user: CurrentUser
) -> ItemProgressPublic:
    """One's progress, bookmark and note on one item."""
    item = items.get_item(session, slug=slug)
    row = mine_to_read(session, identity).progress_of(item)
    return ItemProgressPublic(**item_progress_public(item, row))


@router.put("/me/items/{slug}", responses={404: {"model": ErrorBody}, **ERRORS})
async def update_my_item(
    slug: str,
    body: ItemProgressUpdate,
    session: SessionDep,
    identity: IdentityDep,
    user: CurrentUser,
) -> ItemProgressPublic:
    """Bookmark an item or write its note."""
    item = items.get_item(session, slug=slug)
    data = mine(session, identity, create=True)
    assert data is not None
    if body.bookmarked is not None:
        data.set_bookmark(item, on=body.bookmarked)
    if body.note is not None:
        data.set_note(item, text=body.note)
    session.commit()
    return ItemProgressPublic(**item_progress_public(item, data.progress_of(item)))


@router.get("/me/export", responses=ERRORS)
async def my_export(
    session: SessionDep, identity: IdentityDep, user: CurrentUser
) -> dict[str, Any]:
    """Everything stored about the account: progress, notes, checks, activity, runs."""
    return mine_to_read(session, identity).export(user)

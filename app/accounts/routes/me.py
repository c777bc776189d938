"""The JSON API for accounts and personal data: create a user, get a bearer token, read and
change one's own progress, export it. Bearer token or session cookie alike."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.security import OAuth2PasswordRequestForm

from app.accounts import accounts, recovery
from app.accounts.export import export
from app.accounts.schemas import (
    Export,
    ItemProgressPublic,
    ItemProgressUpdate,
    NewUser,
    ProgressPublic,
    Token,
    UserCreate,
    UserPublic,
)
from app.deps import (
    AccountGuardsDep,
    ClientDep,
    CurrentUser,
    ReaderDep,
    SessionDep,
    SettingsDep,
    WriterDep,
    identify,
)
from app.library import content_cache, items
from app.models import User
from app.progress import study
from app.reader import dashboard
from app.web.schemas import errors

router = APIRouter(
    prefix="/api",
    tags=["accounts"],
    dependencies=[Depends(identify)],
    responses=errors(400, 401, 403, 413, 422, 429),
)


def _public(user: User) -> UserPublic:
    assert user.id is not None
    return UserPublic(id=user.id, username=user.username, created_at=user.created_at)


@router.post("/users", status_code=201, responses=errors(409))
def create_user(
    body: UserCreate, session: SessionDep, guards: AccountGuardsDep, client: ClientDep
) -> NewUser:
    """Create an account. Sign in with POST /api/token. The answer holds the account's
    recovery codes, this once: each sets a new password at /forgot if it is forgotten."""
    user = accounts.sign_up(
        session, guards, username=body.username, password=body.password, client=client
    )
    codes = recovery.issue(session, user)
    session.commit()
    return NewUser(**_public(user).model_dump(), recovery_codes=codes)


@router.post("/token")
def token(
    form: Annotated[OAuth2PasswordRequestForm, Depends()],
    session: SessionDep,
    settings: SettingsDep,
    guards: AccountGuardsDep,
    client: ClientDep,
) -> Token:
    """OAuth2 password flow: a bearer token for `Authorization: Bearer <token>`."""
    user = accounts.sign_in(
        session, guards, username=form.username, password=form.password, client=client
    )
    value = accounts.issue_token(session, user=user, minutes=settings.token_minutes)
    session.commit()
    return Token(access_token=value, expires_in=settings.token_minutes * 60)


@router.get("/me")
def me(user: CurrentUser) -> UserPublic:
    """The account the token or cookie belongs to."""
    return _public(user)


@router.get("/me/progress")
def my_progress(scope: ReaderDep, user: CurrentUser) -> ProgressPublic:
    """The dashboard's figures: status counts, per deck and topic, streak, activity, where to
    go on, bookmarks and recent runs."""
    board = dashboard.dashboard(scope, content_cache.snapshot(scope.session.connection()).catalogue)
    return ProgressPublic.of(board)


@router.get("/me/items/{slug}", responses=errors(404))
def my_item(slug: str, scope: ReaderDep, user: CurrentUser) -> ItemProgressPublic:
    """One's progress, bookmark and note on one item."""
    item = items.item_row(scope.session.connection(), slug=slug)
    return ItemProgressPublic.of(item.slug, study.progress_of(scope, item))


@router.put("/me/items/{slug}", responses=errors(404))
def update_my_item(
    slug: str, body: ItemProgressUpdate, user: CurrentUser, scope: WriterDep
) -> ItemProgressPublic:
    """Bookmark an item or write its note."""
    item = items.item_row(scope.session.connection(), slug=slug)
    if body.bookmarked is not None:
        study.set_bookmark(scope, item, on=body.bookmarked)
    if body.note is not None:
        study.set_note(scope, item, text=body.note)
    scope.session.commit()
    return ItemProgressPublic.of(item.slug, study.progress_of(scope, item))


@router.get("/me/export")
def my_export(scope: ReaderDep, user: CurrentUser) -> Export:
    """Everything stored about the account: progress, notes, checks, activity, runs."""
    return Export.model_validate(export(scope, user))

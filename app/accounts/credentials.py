"""Who a session cookie or a bearer token speaks for: one of these runs for every signed-in
request. Only the SHA-256 of either is stored (accounts.digest).

Two forms of each: the user's row (an entity, for the handlers that change or show the
account), and the owner alone as a plain row (id and name), for the pages that need no
more: no session, no entity to build."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from sqlalchemy import Connection, bindparam
from sqlalchemy import select as core_select
from sqlmodel import Session, col, select

from app.accounts.accounts import digest
from app.domain import InvalidToken
from app.models import ApiToken, LoginSession, User, utcnow
from app.prepared import Prepared


class Owner(NamedTuple):
    """The signed-in user, as a page needs them."""

    user_id: int
    username: str


# Built once, each.
_USER_OF_SESSION = (
    select(User, LoginSession)
    .join(LoginSession, col(LoginSession.user_id) == col(User.id))
    .where(col(LoginSession.token_sha256) == bindparam("digest"))
)
_USER_OF_TOKEN = (
    select(User, ApiToken)
    .join(ApiToken, col(ApiToken.user_id) == col(User.id))
    .where(col(ApiToken.token_sha256) == bindparam("digest"))
)
# Read on every signed-in page: compiled once, run as driver SQL (app/prepared.py).
_OWNER_OF_SESSION = Prepared(
    core_select(col(User.id), col(User.username), col(LoginSession.expires_at))
    .join(LoginSession, col(LoginSession.user_id) == col(User.id))
    .where(col(LoginSession.token_sha256) == bindparam("digest"))
)
_OWNER_OF_TOKEN = Prepared(
    core_select(col(User.id), col(User.username), col(ApiToken.expires_at))
    .join(ApiToken, col(ApiToken.user_id) == col(User.id))
    .where(col(ApiToken.token_sha256) == bindparam("digest"))
)


def user_of_session(session: Session, token: str, *, now: datetime | None = None) -> User | None:
    """The signed-in user of a session cookie; None when unknown or expired."""
    row = session.exec(_USER_OF_SESSION, params={"digest": digest(token)}).first()
    if row is None or row[1].expires_at <= (now or utcnow()):
        return None
    return row[0]


def user_of_token(session: Session, token: str, *, now: datetime | None = None) -> User:
    """The user a bearer token speaks for, or InvalidToken."""
    row = session.exec(_USER_OF_TOKEN, params={"digest": digest(token)}).first()
    if row is None:
        raise _not_valid()
    _refuse_expired(row[1].expires_at, now)
    return row[0]


def owner_of_session(
    connection: Connection, token: str, *, now: datetime | None = None
) -> Owner | None:
    """`user_of_session`, as a plain row."""
    rows = _OWNER_OF_SESSION.rows(connection, {"digest": digest(token)})
    row = rows[0] if rows else None
    if row is None or row[2] <= (now or utcnow()):
        return None
    return Owner._make(row[:2])


def owner_of_token(connection: Connection, token: str, *, now: datetime | None = None) -> Owner:
    """`user_of_token`, as a plain row."""
    rows = _OWNER_OF_TOKEN.rows(connection, {"digest": digest(token)})
    row = rows[0] if rows else None
    if row is None:
        raise _not_valid()
    _refuse_expired(row[2], now)
    return Owner._make(row[:2])


def _not_valid() -> InvalidToken:
    return InvalidToken("The access token is not valid; get a new one from POST /api/token.")


def _refuse_expired(expires_at: datetime, now: datetime | None) -> None:
    if expires_at <= (now or utcnow()):
        raise InvalidToken("The access token has expired; get a new one from POST /api/token.")

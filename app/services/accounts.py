"""Accounts: sign-up, sign-in, password changes, sessions and bearer tokens, deletion.

Passwords are hashed with argon2id. Session cookies and bearer tokens are random secrets
that the database keeps only as SHA-256 digests, so a copy of the database signs no one in."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime, timedelta
from functools import cache, lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete
from sqlmodel import Session, col, select

from app.domain import AccountError, BadCredentials, InvalidToken
from app.models import ApiToken, LoginSession, User, utcnow
from app.services.ratelimit import AccountLimits

MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 256  # argon2 takes any length; this only bounds the work per request
USERNAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_.-]{2,39}")
_hasher = PasswordHasher()


@cache
def _dummy_hash() -> str:
    """Verifying against this when the user does not exist takes as long as a real check, so
    the time a refusal takes does not tell whether the name exists. Made on first need."""
    return _hasher.hash("not a real password, only a timing stand-in")


@lru_cache(maxsize=1)
def _common_passwords() -> frozenset[str]:
    """The 30,000 most common passwords of zxcvbn's list, loaded on first use (0.8 MB)."""
    from zxcvbn.frequency_lists import FREQUENCY_LISTS  # type: ignore[import-untyped]

    return frozenset(FREQUENCY_LISTS["passwords"])


def normalise_username(username: str) -> str:
    return username.strip().lower()


def check_username(username: str) -> str:
    """The username as stored, or AccountError saying what is wrong with it."""
    name = normalise_username(username)
    if not USERNAME_PATTERN.fullmatch(name):
        raise AccountError(
            "A username is 3 to 40 letters, digits, '.', '_' or '-', starting with a letter "
            "or digit."
        )
    return name


def check_password(password: str, *, username: str = "") -> None:
    """Length 8 or more, no composition rules; common and guessable passwords are refused."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AccountError(f"Use at least {MIN_PASSWORD_LENGTH} characters for the password.")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise AccountError(f"Use at most {MAX_PASSWORD_LENGTH} characters for the password.")
    lowered = password.lower()
    if lowered in _common_passwords() or (username and username in lowered):
        raise AccountError(
            "That password is too easy to guess: it is one of the most common passwords or "
            "holds your username. A few unrelated words make a strong one."
        )


def create_user(session: Session, *, username: str, password: str) -> User:
    """A new account (not yet committed); AccountError when the name is taken or invalid."""
    name = check_username(username)
    check_password(password, username=name)
    if session.exec(select(User).where(User.username == name)).first() is not None:
        raise AccountError(f"The username '{name}' is taken; choose another.")
    user = User(username=name, password_hash=_hasher.hash(password))
    session.add(user)
    session.flush()
    return user


def authenticate(session: Session, *, username: str, password: str) -> User:
    """The user with this name and password, or BadCredentials (same answer either way)."""
    user = session.exec(select(User).where(User.username == normalise_username(username))).first()
    if user is None:
        _verify(_dummy_hash(), password)
        raise BadCredentials()
    if not _verify(user.password_hash, password):
        raise BadCredentials()
    if _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = _hasher.hash(password)
        session.add(user)
    return user


def sign_in(
    session: Session, limits: AccountLimits, *, username: str, password: str, client: str
) -> User:
    """The sign-in policy, for the form and the token API alike: attempts counted per
    client, then wrong passwords per account, then the check itself."""
    account = normalise_username(username)
    limits.sign_in_per_client.hit(client)
    limits.failures_per_account.check(account)
    try:
        return authenticate(session, username=username, password=password)
    except BadCredentials:
        limits.failures_per_account.hit(account)
        raise


def sign_up(
    session: Session, limits: AccountLimits, *, username: str, password: str, client: str
) -> User:
    """The sign-up policy, for the form and the API alike: new accounts counted per client,
    then the account created (not committed)."""
    limits.sign_up_per_client.hit(client)
    return create_user(session, username=username, password=password)


def _verify(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def change_password(
    session: Session, *, user: User, current: str, new: str, keep_session: str | None
) -> None:
    """Set a new password after checking the current one; every other browser session and
    every bearer token of the user ends (not committed)."""
    if not _verify(user.password_hash, current):
        raise AccountError("The current password is not right; nothing was changed.")
    check_password(new, username=user.username)
    user.password_hash = _hasher.hash(new)
    user.password_changed_at = utcnow()
    session.add(user)
    others = delete(LoginSession).where(col(LoginSession.user_id) == user.id)
    if keep_session:
        others = others.where(col(LoginSession.token_sha256) != digest(keep_session))
    session.execute(others)
    session.execute(delete(ApiToken).where(col(ApiToken.user_id) == user.id))


def confirm_password(user: User, password: str) -> None:
    """AccountError unless `password` is the user's (asked before deleting the account)."""
    if not _verify(user.password_hash, password):
        raise AccountError("The password is not right; nothing was deleted.")


def _id(user: User) -> int:
    assert user.id is not None, "a stored user has an id"
    return user.id


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start_session(session: Session, *, user: User, days: int) -> str:
    """A new sign-in session; returns the token for the cookie (not committed)."""
    token = secrets.token_urlsafe(32)
    session.add(
        LoginSession(
            token_sha256=digest(token),
            user_id=_id(user),
            expires_at=utcnow() + timedelta(days=days),
        )
    )
    return token


def end_session(session: Session, token: str) -> None:
    session.execute(delete(LoginSession).where(col(LoginSession.token_sha256) == digest(token)))


def user_of_session(session: Session, token: str, *, now: datetime | None = None) -> User | None:
    """The signed-in user of a session cookie; None when unknown or expired."""
    row = session.exec(
        select(User, LoginSession)
        .join(LoginSession, col(LoginSession.user_id) == col(User.id))
        .where(LoginSession.token_sha256 == digest(token))
    ).first()
    if row is None or row[1].expires_at <= (now or utcnow()):
        return None
    return row[0]


def issue_token(session: Session, *, user: User, minutes: int) -> str:
    """A bearer token valid for `minutes` (not committed)."""
    token = secrets.token_urlsafe(32)
    expires = utcnow() + timedelta(minutes=minutes)
    session.add(ApiToken(token_sha256=digest(token), user_id=_id(user), expires_at=expires))
    return token


def user_of_token(session: Session, token: str, *, now: datetime | None = None) -> User:
    """The user a bearer token speaks for, or InvalidToken."""
    row = session.exec(
        select(User, ApiToken)
        .join(ApiToken, col(ApiToken.user_id) == col(User.id))
        .where(ApiToken.token_sha256 == digest(token))
    ).first()
    if row is None:
        raise InvalidToken("The access token is not valid; get a new one from POST /api/token.")
    if row[1].expires_at <= (now or utcnow()):
        raise InvalidToken("The access token has expired; get a new one from POST /api/token.")
    return row[0]


def delete_user(session: Session, *, user: User) -> None:
    """Remove the account; the database cascades to everything attached (not committed)."""
    session.delete(user)

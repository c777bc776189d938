"""Accounts: sign-up, sign-in, password changes, sessions and bearer tokens, deletion.

Passwords are hashed with argon2id (app/accounts/passwords.py), never on the event loop: every
function here is blocking and is called from the handlers' worker threads.
Session cookies and bearer tokens are random secrets that the database keeps only as
SHA-256 digests, so a copy of the database signs no one in.

The policies (`sign_in`, `sign_up`, `change_password`, `delete_account`) are what routes
call: each counts attempts per client and wrong passwords per (account, client) before any
hashing, so a flood is refused cheaply, and a stranger's guesses never lock the owner out."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete
from sqlmodel import Session, col, select

from app.accounts import passwords
from app.accounts.passwords import PasswordChecks
from app.domain import AccountError, BadCredentials
from app.models import ApiToken, LoginSession, User, utcnow
from app.platform.ratelimit import AccountLimits

USERNAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_.-]{2,39}")


@dataclass(frozen=True)
class AccountGuards:
    """What stands between a client and a password check: the attempt limits, and the
    bounded pool that runs the hashing."""

    limits: AccountLimits
    checks: PasswordChecks


def normalise_username(username: str) -> str:
    return username.strip().lower()


def check_username(username: str) -> str:
    """The username as stored, or AccountError saying what is wrong with it."""
    name = normalise_username(username)
    if not USERNAME_PATTERN.fullmatch(name):
        raise AccountError(
            "A username is 3 to 40 letters, digits, '.', '_' or '-', starting with a letter "
            "or digit.",
            field="username",
        )
    return name


def create_user(session: Session, *, username: str, password: str) -> User:
    """A new account (not yet committed); AccountError when the name is taken or invalid."""
    name = check_username(username)
    passwords.check_new(password, username=name)
    _check_free(session, name)  # again: another request may have taken it meanwhile
    user = User(username=name, password_hash=passwords.hash_password(password))
    session.add(user)
    session.flush()
    return user


def authenticate(session: Session, *, username: str, password: str) -> User:
    """The user with this name and password, or BadCredentials (same answer either way).
    Hashes: call it through PasswordChecks."""
    user = session.exec(select(User).where(User.username == normalise_username(username))).first()
    if user is None:
        passwords.verify_nobody(password)
        raise BadCredentials()
    if not passwords.verify(user.password_hash, password):
        raise BadCredentials()
    if passwords.needs_rehash(user.password_hash):
        user.password_hash = passwords.hash_password(password)
        session.add(user)
    return user


def sign_in(
    session: Session,
    guards: AccountGuards,
    *,
    username: str,
    password: str,
    client: str,
) -> User:
    """The sign-in policy, for the form and the token API alike."""
    key = _account_client(username, client)
    guards.limits.sign_in_per_client.hit(client)
    guards.limits.failures_per_account_client.check(key)
    try:
        return guards.checks.run(authenticate, session, username=username, password=password)
    except BadCredentials:
        guards.limits.failures_per_account_client.hit(key)
        raise


def sign_up(
    session: Session,
    guards: AccountGuards,
    *,
    username: str,
    password: str,
    client: str,
) -> User:
    """The sign-up policy, for the form and the API alike: what can be checked without
    hashing is checked first and costs nothing (a typo in a classroom behind one address
    should not lock it out); an attempt that reaches the password hash counts toward the
    sign-ups allowed per client. Then the account is created (not committed)."""
    name = check_username(username)
    passwords.check_new(password, username=name)
    _check_free(session, name)
    guards.limits.sign_up_per_client.hit(client)
    return guards.checks.run(create_user, session, username=username, password=password)


def _check_free(session: Session, name: str) -> None:
    if session.exec(select(User).where(User.username == name)).first() is not None:
        raise AccountError(f"The username '{name}' is taken; choose another.", field="username")


def change_password(
    session: Session,
    guards: AccountGuards,
    *,
    user: User,
    current: str,
    new: str,
    keep_session: str | None,
    client: str,
) -> None:
    """Set a new password after checking the current one; every other browser session and
    every bearer token of the user ends (not committed)."""
    key = _account_client(user.username, client)
    guards.limits.password_checks_per_client.hit(client)
    guards.limits.failures_per_account_client.check(key)
    try:
        guards.checks.run(
            _change_password, session, user=user, current=current, new=new, keep=keep_session
        )
    except WrongPassword:
        guards.limits.failures_per_account_client.hit(key)
        raise


def _change_password(
    session: Session, *, user: User, current: str, new: str, keep: str | None
) -> None:
    if not passwords.verify(user.password_hash, current):
        raise WrongPassword("The current password is not right; nothing was changed.")
    set_new_password(session, user=user, new=new, keep=keep)


def set_new_password(session: Session, *, user: User, new: str, keep: str | None = None) -> None:
    """The one way a password changes (by its owner, with a recovery code, or by the
    operator): checked, hashed (call it through PasswordChecks), and every session but
    `keep` and every API token ended (not committed)."""
    passwords.check_new(new, username=user.username)
    user.password_hash = passwords.hash_password(new)
    user.password_changed_at = utcnow()
    session.add(user)
    others = delete(LoginSession).where(col(LoginSession.user_id) == user.id)
    if keep:
        others = others.where(col(LoginSession.token_sha256) != digest(keep))
    session.execute(others)
    session.execute(delete(ApiToken).where(col(ApiToken.user_id) == user.id))


def delete_account(
    session: Session,
    guards: AccountGuards,
    *,
    user: User,
    password: str,
    client: str,
) -> None:
    """Delete the account after its password is confirmed; the database cascades to
    everything attached (not committed)."""
    confirm_password(
        session, guards, user=user, password=password, client=client, then="nothing was deleted"
    )
    session.delete(session.merge(user))


def confirm_password(
    session: Session,
    guards: AccountGuards,
    *,
    user: User,
    password: str,
    client: str,
    then: str = "nothing was changed",
) -> None:
    """WrongPassword unless `password` is the user's; counted per client and, when wrong,
    per (account, client), as every password check is."""
    key = _account_client(user.username, client)
    guards.limits.password_checks_per_client.hit(client)
    guards.limits.failures_per_account_client.check(key)
    if not guards.checks.run(passwords.verify, user.password_hash, password):
        guards.limits.failures_per_account_client.hit(key)
        raise WrongPassword(f"The password is not right; {then}.")


class WrongPassword(AccountError):
    """The password given to confirm a change is not the account's."""


def _account_client(username: str, client: str) -> str:
    """Wrong passwords count per account and client: a stranger cannot lock the owner out."""
    return f"{normalise_username(username)}|{client}"


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


def issue_token(session: Session, *, user: User, minutes: int) -> str:
    """A bearer token valid for `minutes` (not committed)."""
    token = secrets.token_urlsafe(32)
    expires = utcnow() + timedelta(minutes=minutes)
    session.add(ApiToken(token_sha256=digest(token), user_id=_id(user), expires_at=expires))
    return token


def set_short_learning_steps(session: Session, *, user: User, on: bool) -> None:
    """Spaced review with FSRS's short learning steps, or (off) a day at least after a
    right answer (app/study/review.py; not committed). Cards already scheduled keep their
    due time; the next answer to each follows the new choice."""
    user.short_learning_steps = on
    session.add(user)


def set_admin(session: Session, *, username: str, admin: bool) -> User:
    """Grant or take back the authoring pages (an operator's command; not committed)."""
    user = session.exec(select(User).where(User.username == normalise_username(username))).first()
    if user is None:
        raise AccountError(f"There is no account called '{normalise_username(username)}'.")
    user.is_admin = admin
    session.add(user)
    return user

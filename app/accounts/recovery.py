"""Getting back into an account without its password, and without email: ten one-time
recovery codes, shown when the account is made (and made anew from the account page), kept
only as SHA-256 digests. A code sets a new password once; like a password change, that ends
every other session and revokes every API token. Attempts are limited as sign-ins are."""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import delete
from sqlmodel import Session, col, select

from app.accounts import accounts
from app.accounts.accounts import AccountGuards, normalise_username
from app.domain import AccountError
from app.models import RecoveryCode, User, utcnow

CODES = 10
# No 0/o, 1/l/i: a code is read off paper. 31 letters and digits, 12 of them: 59 bits.
ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
CODE_LENGTH = 12
NO_MATCH = "That username and recovery code do not match (or the code was used already)."


def issue(session: Session, user: User) -> list[str]:
    """New codes for `user`, replacing any left (not committed): shown once, never stored."""
    assert user.id is not None
    session.execute(delete(RecoveryCode).where(col(RecoveryCode.user_id) == user.id))
    codes = ["".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH)) for _ in range(CODES)]
    for code in codes:
        session.add(RecoveryCode(user_id=user.id, code_sha256=_digest(code)))
    return [_readable(code) for code in codes]


def unused(session: Session, user: User) -> int:
    """How many of the user's codes are left."""
    statement = select(RecoveryCode).where(
        RecoveryCode.user_id == user.id, col(RecoveryCode.used_at).is_(None)
    )
    return len(session.exec(statement).all())


def reset_password(
    session: Session,
    guards: AccountGuards,
    *,
    username: str,
    code: str,
    new_password: str,
    client: str,
) -> User:
    """Set a new password with a recovery code (not committed); the code is then used up.
    Counted like sign-ins: per client, and wrong codes per (account, client)."""
    key = f"{normalise_username(username)}|{client}"
    guards.limits.sign_in_per_client.hit(client)
    guards.limits.failures_per_account_client.check(key)
    user = session.exec(select(User).where(User.username == normalise_username(username))).first()
    found = None
    if user is not None:
        found = session.exec(
            select(RecoveryCode).where(
                RecoveryCode.user_id == user.id,
                RecoveryCode.code_sha256 == _digest(code),
                col(RecoveryCode.used_at).is_(None),
            )
        ).first()
    if user is None or found is None:
        guards.limits.failures_per_account_client.hit(key)
        raise AccountError(NO_MATCH, field="code")
    guards.checks.run(accounts.set_new_password, session, user=user, new=new_password)
    found.used_at = utcnow()
    session.add(found)
    return user


def set_password(session: Session, *, username: str, new_password: str) -> User:
    """The operator's reset (`backprop reset-password USERNAME`): a new password, every
    session and token ended (not committed). AccountError when there is no such account."""
    name = normalise_username(username)
    user = session.exec(select(User).where(User.username == name)).first()
    if user is None:
        raise AccountError(f"There is no account called '{name}'.")
    accounts.set_new_password(session, user=user, new=new_password)
    return user


def _digest(code: str) -> str:
    """Of the code as typed, without case, spaces or dashes."""
    cleaned = "".join(ch for ch in code.lower() if ch.isalnum())
    return hashlib.sha256(cleaned.encode()).hexdigest()


def _readable(code: str) -> str:
    return "-".join(code[i : i + 4] for i in range(0, len(code), 4))

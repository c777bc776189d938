"""Whose personal data a request touches: the learner of a signed-in user or of a guest's
browser. Resolving one gives a LearnerScope, which every personal-data service takes first.
(A guest carried into an account: app/accounts/merge.py.)"""

from __future__ import annotations

from sqlalchemy import bindparam
from sqlalchemy import select as core_select
from sqlmodel import Session, col, select

from app.db import dialect_of
from app.domain import NOBODY, Identity, LearnerScope
from app.models import (
    Learner,
    utcnow,
)

# Built once: resolving the learner is part of every personal request.
_BY_VISITOR = select(Learner).where(col(Learner.visitor) == bindparam("visitor"))
_BY_USER = select(Learner).where(col(Learner.user_id) == bindparam("user_id"))
# Only the id, as a plain row: what resolving needs (no entity to build on every page).
_ID_BY_VISITOR = core_select(col(Learner.id)).where(col(Learner.visitor) == bindparam("owner"))
_ID_BY_USER = core_select(col(Learner.id)).where(col(Learner.user_id) == bindparam("owner"))


def guest_learner(session: Session, visitor: str) -> Learner | None:
    return session.exec(_BY_VISITOR, params={"visitor": visitor}).first()


def user_learner(session: Session, user_id: int | None) -> Learner | None:
    return session.exec(_BY_USER, params={"user_id": user_id}).first()


def resolve(session: Session, identity: Identity) -> LearnerScope | None:
    """The scope of the asker's data, or None when they have recorded nothing yet."""
    owner: int | str
    if identity.user_id is not None:
        statement, owner = _ID_BY_USER, identity.user_id
    else:
        statement, owner = _ID_BY_VISITOR, identity.visitor
    learner_id = session.connection().execute(statement, {"owner": owner}).scalar()
    if learner_id is None:
        return None
    return LearnerScope(session, learner_id)


def resolve_or_create(session: Session, identity: Identity) -> LearnerScope:
    """The scope of the asker's data, creating their learner on first need (not committed).
    Two first requests of one browser at once may both create it: the insert gives way to
    a learner already there (ON CONFLICT DO NOTHING), and both then take the one row."""
    scope = resolve(session, identity)
    if scope is not None:
        return scope
    owner = (
        {"user_id": identity.user_id}
        if identity.user_id is not None
        else {"visitor": identity.visitor}
    )
    insert = dialect_of(session).insert(Learner).values(**owner, created_at=utcnow())
    session.execute(insert.on_conflict_do_nothing())
    scope = resolve(session, identity)
    assert scope is not None  # inserted now, or by the request that won
    return scope


def for_reading(session: Session, identity: Identity) -> LearnerScope:
    """The asker's data for reading. Someone who has done nothing yet has no learner: they
    read as empty, in the same shapes, and nothing is created for them."""
    return resolve(session, identity) or LearnerScope(session, NOBODY)

"""Who a run belongs to, worked out once for every way of starting one (code from the
editor, a lab started through the API)."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.domain import Identity
from app.library import items
from app.platform import learners
from app.runs.runs import RunOrigin


def origin_for(
    engine: Engine,
    identity: Identity,
    *,
    client: str,
    item_slug: str | None,
    sample: int | None,
) -> RunOrigin:
    """The run's owner and source. A browser that will be recognised again (or an account)
    gets a learner now; a cookie-less client owns the run by its capability token instead.
    Blocking (call it in a thread); commits the new learner, if any, in a session of its
    own, closed before the run is awaited."""
    with Session(engine) as session:
        item_id = items.item_row(session.connection(), slug=item_slug).id if item_slug else None
        learner_id = None
        if identity.may_have_records:
            learner_id = learners.resolve_or_create(session, identity).learner_id
            session.commit()
    return RunOrigin(
        owner=identity.owner_key,
        client=client,
        learner_id=learner_id,
        item_id=item_id,
        sample_index=sample,
        signed_in=identity.signed_in,
    )

"""An account's edited code, per item sample, kept until it is reset: its editors open with
it on any device. (Guests' drafts are kept by their browser: static/js/runner.js.)"""

from __future__ import annotations

from sqlmodel import col, delete, select

from app.domain import MAX_DRAFT_CHARACTERS, InvalidInput, LearnerScope
from app.library.items import ItemRow
from app.models import CodeSample, Draft, utcnow

# Read on every item page an account opens, with the rest of its reader's standing:
# app/reader/item_standing.py.


def keep(scope: LearnerScope, item: ItemRow, *, sample: int, code: str) -> None:
    """Keep `code` as the draft of sample `sample` (not committed)."""
    if sample not in item_samples(scope, item):
        raise InvalidInput(f"This item has no sample {sample}.")
    if len(code) > MAX_DRAFT_CHARACTERS:
        raise InvalidInput(f"A draft holds at most {MAX_DRAFT_CHARACTERS:,} characters.")
    code = code.replace("\x00", "\ufffd")  # no database text holds NUL
    statement = select(Draft).where(
        Draft.learner_id == scope.learner_id,
        Draft.item_id == item.id,
        Draft.sample_index == sample,
    )
    draft = scope.session.exec(statement).first()
    if draft is None:
        draft = Draft(learner_id=scope.learner_id, item_id=item.id, sample_index=sample, code=code)
    draft.code, draft.updated_at = code, utcnow()
    scope.session.add(draft)


def discard(scope: LearnerScope, item: ItemRow, *, sample: int) -> None:
    """Forget the draft of sample `sample`, if any (not committed): back to the original."""
    scope.session.execute(
        delete(Draft).where(
            col(Draft.learner_id) == scope.learner_id,
            col(Draft.item_id) == item.id,
            col(Draft.sample_index) == sample,
        )
    )


def item_samples(scope: LearnerScope, item: ItemRow) -> set[int]:
    statement = select(CodeSample.index).where(CodeSample.item_id == item.id)
    return set(scope.session.exec(statement))

"""An account's edited code per exercise, kept until it is reset: the exercise's editor
opens with it on any device. (Guests' drafts are kept by their browser, as for samples:
static/js/exercise.js.)"""

from __future__ import annotations

from sqlmodel import col, delete, select

from app.domain import MAX_DRAFT_CHARACTERS, InvalidInput, LearnerScope
from app.models import ExerciseDraft, utcnow


def as_typed(code: str) -> str:
    """Code as an editor holds it: a form's text comes with CRLF line breaks (browsers send
    them so), an editor's JSON with LF; and no database text holds NUL."""
    return code.replace("\r\n", "\n").replace("\x00", "\ufffd")


def keep(scope: LearnerScope, slug: str, *, code: str) -> None:
    """Keep `code` as the learner's draft of the exercise `slug` (checked to exist by the
    caller; not committed)."""
    if len(code) > MAX_DRAFT_CHARACTERS:
        raise InvalidInput(f"A draft holds at most {MAX_DRAFT_CHARACTERS:,} characters.")
    code = as_typed(code)
    statement = select(ExerciseDraft).where(
        ExerciseDraft.learner_id == scope.learner_id, ExerciseDraft.exercise_slug == slug
    )
    draft = scope.session.exec(statement).first()
    if draft is None:
        draft = ExerciseDraft(learner_id=scope.learner_id, exercise_slug=slug, code=code)
    draft.code, draft.updated_at = code, utcnow()
    scope.session.add(draft)


def discard(scope: LearnerScope, slug: str) -> None:
    """Forget the draft, if any (not committed): back to the starter."""
    scope.session.execute(
        delete(ExerciseDraft).where(
            col(ExerciseDraft.learner_id) == scope.learner_id,
            col(ExerciseDraft.exercise_slug) == slug,
        )
    )

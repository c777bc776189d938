"""Practising the exercises: the hints shown, and the re-solving schedule of each solved
exercise (its review events and its card).

Revision ID: 0017_exercise_practice
Revises: 0016_exercises
Create Date: 2026-11-26 13:05:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0017_exercise_practice"
down_revision: str | None = "0016_exercises"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_text = sqlmodel.sql.sqltypes.AutoString
_time = sqlmodel.sql.sqltypes.UTCDateTime


def upgrade() -> None:
    op.create_table(
        "hintview",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("exercise_slug", _text(length=80), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=True),
        sa.Column("visitor", _text(length=64), nullable=False),
        sa.Column("hint_index", sa.Integer(), nullable=False),
        sa.Column("level", _text(length=16), nullable=False),
        sa.Column("category", _text(length=32), nullable=False),
        sa.Column("shown_at", _time(), nullable=False),
        sa.ForeignKeyConstraint(["learner_id"], ["learner.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("visitor", "exercise_slug", "hint_index", name="uq_hintview_hint"),
    )
    op.create_index(op.f("ix_hintview_exercise_slug"), "hintview", ["exercise_slug"])
    op.create_index(op.f("ix_hintview_learner_id"), "hintview", ["learner_id"])
    op.create_table(
        "exercisereviewevent",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("exercise_slug", _text(length=80), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("source", _text(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("hints", sa.Integer(), nullable=False),
        sa.Column("seconds", sa.Integer(), nullable=False),
        sa.Column("reviewed_at", _time(), nullable=False),
        sa.ForeignKeyConstraint(["learner_id"], ["learner.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        op.f("ix_exercisereviewevent_learner_id"), "exercisereviewevent", ["learner_id"]
    )
    op.create_index(
        op.f("ix_exercisereviewevent_exercise_slug"), "exercisereviewevent", ["exercise_slug"]
    )
    op.create_table(
        "exercisecard",
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("exercise_slug", _text(length=80), nullable=False),
        sa.Column("due", _time(), nullable=False),
        sa.Column("card", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["learner_id"], ["learner.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("learner_id", "exercise_slug"),
    )
    op.create_index(op.f("ix_exercisecard_due"), "exercisecard", ["due"])


def downgrade() -> None:
    op.drop_index(op.f("ix_exercisecard_due"), table_name="exercisecard")
    op.drop_table("exercisecard")
    op.drop_index(op.f("ix_exercisereviewevent_exercise_slug"), table_name="exercisereviewevent")
    op.drop_index(op.f("ix_exercisereviewevent_learner_id"), table_name="exercisereviewevent")
    op.drop_table("exercisereviewevent")
    op.drop_index(op.f("ix_hintview_learner_id"), table_name="hintview")
    op.drop_index(op.f("ix_hintview_exercise_slug"), table_name="hintview")
    op.drop_table("hintview")

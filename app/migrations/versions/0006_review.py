"""Spaced review: the review log (the source of truth) and each card's schedule.

Revision ID: 0006_review
Revises: 0005_quizzes
Create Date: 2026-11-23 02:05:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0006_review"
down_revision: str | None = "0005_quizzes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "reviewevent",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("question_id", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("source", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("reviewed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["learner_id"], ["learner.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["question_id"], ["question.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_reviewevent_learner_id"), "reviewevent", ["learner_id"])
    op.create_index(op.f("ix_reviewevent_question_id"), "reviewevent", ["question_id"])
    op.create_table(
        "reviewcard",
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("question_id", sa.Integer(), nullable=False),
        sa.Column("due", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("card", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["learner_id"], ["learner.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["question_id"], ["question.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("learner_id", "question_id"),
    )
    op.create_index(op.f("ix_reviewcard_due"), "reviewcard", ["due"])


def downgrade() -> None:
    op.drop_index(op.f("ix_reviewcard_due"), table_name="reviewcard")
    op.drop_table("reviewcard")
    op.drop_index(op.f("ix_reviewevent_question_id"), table_name="reviewevent")
    op.drop_index(op.f("ix_reviewevent_learner_id"), table_name="reviewevent")
    op.drop_table("reviewevent")

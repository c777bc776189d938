"""Coding rounds: an exercise against a deadline, in a mock interview or on its own, with
its graded submission and its follow-up; and each exercise's follow-up prompts.

Revision ID: 0018_mock_coding
Revises: 0017_exercise_practice
Create Date: 2026-11-26 13:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0018_mock_coding"
down_revision: str | None = "0017_exercise_practice"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_text = sqlmodel.sql.sqltypes.AutoString
_time = sqlmodel.sql.sqltypes.UTCDateTime


def upgrade() -> None:
    with op.batch_alter_table("exercise") as batch:
        batch.add_column(sa.Column("followups", sa.Text(), nullable=False, server_default="[]"))
    op.create_table(
        "codinground",
        sa.Column("id", _text(length=32), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("attempt_id", _text(length=32), nullable=True),
        sa.Column("exercise_slug", _text(length=80), nullable=False),
        sa.Column("minutes", sa.Integer(), nullable=False),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("started_at", _time(), nullable=True),
        sa.Column("deadline", _time(), nullable=True),
        sa.Column("closed_at", _time(), nullable=True),
        sa.Column("run_id", _text(length=32), nullable=True),
        sa.Column("followup_index", sa.Integer(), nullable=True),
        sa.Column("followup_covered", _text(length=100), nullable=True),
        sa.ForeignKeyConstraint(["learner_id"], ["learner.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["attempt_id"], ["quizattempt.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("attempt_id"),
    )
    op.create_index(op.f("ix_codinground_learner_id"), "codinground", ["learner_id"])
    op.create_index(op.f("ix_codinground_exercise_slug"), "codinground", ["exercise_slug"])


def downgrade() -> None:
    op.drop_index(op.f("ix_codinground_exercise_slug"), table_name="codinground")
    op.drop_index(op.f("ix_codinground_learner_id"), table_name="codinground")
    op.drop_table("codinground")
    with op.batch_alter_table("exercise") as batch:
        batch.drop_column("followups")

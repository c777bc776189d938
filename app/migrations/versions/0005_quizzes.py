"""Questions with choices (content), quiz attempts and their answers (personal data).

Revision ID: 0005_quizzes
Revises: 0004_run_ownership
Create Date: 2026-11-23 02:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0005_quizzes"
down_revision: str | None = "0004_run_ownership"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "question",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("model_answer", sa.Text(), nullable=False),
        sa.Column("key_points", sa.Text(), nullable=False),
        sa.Column("check_code", sa.Text(), nullable=False),
        sa.Column("check_stdout", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("item_id", "position", name="uq_question_item_position"),
    )
    op.create_index(op.f("ix_question_item_id"), "question", ["item_id"], unique=False)
    op.create_table(
        "choice",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("question_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("why", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["question_id"], ["question.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("question_id", "position", name="uq_choice_position"),
    )
    op.create_index(op.f("ix_choice_question_id"), "choice", ["question_id"], unique=False)
    op.create_table(
        "quizattempt",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("mode", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("title", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("started_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("deadline", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("closed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["learner_id"], ["learner.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_quizattempt_learner_id"), "quizattempt", ["learner_id"], unique=False)
    op.create_table(
        "attemptquestion",
        sa.Column("attempt_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("question_id", sa.Integer(), nullable=False),
        sa.Column("choice_order", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("shown_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("choice_id", sa.Integer(), nullable=True),
        sa.Column("answered_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("correct", sa.Boolean(), nullable=True),
        sa.ForeignKeyConstraint(["attempt_id"], ["quizattempt.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["question_id"], ["question.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("attempt_id", "position"),
    )
    op.create_index(
        op.f("ix_attemptquestion_question_id"), "attemptquestion", ["question_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_attemptquestion_question_id"), table_name="attemptquestion")
    op.drop_table("attemptquestion")
    op.drop_index(op.f("ix_quizattempt_learner_id"), table_name="quizattempt")
    op.drop_table("quizattempt")
    op.drop_index(op.f("ix_choice_question_id"), table_name="choice")
    op.drop_table("choice")
    op.drop_index(op.f("ix_question_item_id"), table_name="question")
    op.drop_table("question")

"""Code exercises: their public side (statement, starter, visible tests), the reveals of
their solutions, accounts' drafts, and the run columns that make a run a graded submission.

Revision ID: 0016_exercises
Revises: 0015_question_code
Create Date: 2026-11-26 10:50:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0016_exercises"
down_revision: str | None = "0015_question_code"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_text = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "exercise",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", _text(length=80), nullable=False),
        sa.Column("title", _text(length=200), nullable=False),
        sa.Column("topic_slug", _text(length=64), nullable=False),
        sa.Column("difficulty", _text(length=16), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("items", _text(length=1000), nullable=False),
        sa.Column("entry_point", _text(length=120), nullable=False),
        sa.Column("statement_markdown", sa.Text(), nullable=False),
        sa.Column("statement_html", sa.Text(), nullable=False),
        sa.Column("starter_code", sa.Text(), nullable=False),
        sa.Column("visible_tests", sa.Text(), nullable=False),
        sa.Column("backends", _text(length=20), nullable=False),
        sa.Column("content_sha256", _text(length=64), nullable=False),
        sa.ForeignKeyConstraint(["topic_slug"], ["topic.slug"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("slug"),
    )
    op.create_index(op.f("ix_exercise_topic_slug"), "exercise", ["topic_slug"])
    op.create_table(
        "solutionreveal",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("exercise_slug", _text(length=80), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=True),
        sa.Column("visitor", _text(length=64), nullable=False),
        sa.Column("revealed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["learner_id"], ["learner.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_solutionreveal_exercise_slug"), "solutionreveal", ["exercise_slug"])
    op.create_index(op.f("ix_solutionreveal_learner_id"), "solutionreveal", ["learner_id"])
    op.create_table(
        "exercisedraft",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("exercise_slug", _text(length=80), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["learner_id"], ["learner.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("learner_id", "exercise_slug", name="uq_exercisedraft_exercise"),
    )
    op.create_index(op.f("ix_exercisedraft_learner_id"), "exercisedraft", ["learner_id"])
    with op.batch_alter_table("run") as batch:
        batch.add_column(sa.Column("exercise_slug", _text(length=80), nullable=True))
        batch.add_column(sa.Column("grading_mode", _text(length=8), nullable=True))
        batch.add_column(sa.Column("grading_verdict", _text(length=16), nullable=True))
        batch.add_column(sa.Column("score", sa.Float(), nullable=True))
        batch.add_column(sa.Column("grading", sa.Text(), nullable=True))
        batch.create_index(op.f("ix_run_exercise_slug"), ["exercise_slug"])


def downgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.drop_index(op.f("ix_run_exercise_slug"))
        batch.drop_column("grading")
        batch.drop_column("score")
        batch.drop_column("grading_verdict")
        batch.drop_column("grading_mode")
        batch.drop_column("exercise_slug")
    op.drop_index(op.f("ix_exercisedraft_learner_id"), table_name="exercisedraft")
    op.drop_table("exercisedraft")
    op.drop_index(op.f("ix_solutionreveal_learner_id"), table_name="solutionreveal")
    op.drop_index(op.f("ix_solutionreveal_exercise_slug"), table_name="solutionreveal")
    op.drop_table("solutionreveal")
    op.drop_index(op.f("ix_exercise_topic_slug"), table_name="exercise")
    op.drop_table("exercise")

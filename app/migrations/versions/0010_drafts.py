"""Drafts: an account's edited code per item sample, restored in its editors.

Revision ID: 0010_drafts
Revises: 0009_run_code
Create Date: 2026-11-23 04:50:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0010_drafts"
down_revision: str | None = "0009_run_code"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "draft",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "learner_id",
            sa.Integer(),
            sa.ForeignKey("learner.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "item_id", sa.Integer(), sa.ForeignKey("item.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("sample_index", sa.Integer(), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.UniqueConstraint("learner_id", "item_id", "sample_index", name="uq_draft_sample"),
    )
    op.create_index("ix_draft_learner_id", "draft", ["learner_id"])


def downgrade() -> None:
    op.drop_index("ix_draft_learner_id", table_name="draft")
    op.drop_table("draft")

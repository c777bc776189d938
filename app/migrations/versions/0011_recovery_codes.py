"""Recovery codes: one-time codes that set a new password without the old one.

Revision ID: 0011_recovery_codes
Revises: 0010_drafts
Create Date: 2026-11-23 05:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0011_recovery_codes"
down_revision: str | None = "0010_drafts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "recoverycode",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("user.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("code_sha256", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("used_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    )
    op.create_index("ix_recoverycode_user_id", "recoverycode", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_recoverycode_user_id", table_name="recoverycode")
    op.drop_table("recoverycode")

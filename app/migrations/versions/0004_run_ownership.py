"""Runs: a capability token's digest for cookie-less clients, and the process driving each.

Revision ID: 0004_run_ownership
Revises: 0003_accounts
Create Date: 2026-11-23 02:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0004_run_ownership"
down_revision: str | None = "0003_accounts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.add_column(
            sa.Column("token_sha256", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
        batch.add_column(
            sa.Column(
                "driver",
                sqlmodel.sql.sqltypes.AutoString(length=160),
                nullable=False,
                server_default="",
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.drop_column("driver")
        batch.drop_column("token_sha256")

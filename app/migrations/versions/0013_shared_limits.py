"""Shared limits: attempts counted by rate limits live in the database (every web replica
counts the same ones), and a run keeps a digest of its client's address, by which runs in
flight per client are counted.

Revision ID: 0013_shared_limits
Revises: 0012_run_delivery
Create Date: 2026-11-23 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0013_shared_limits"
down_revision: str | None = "0012_run_delivery"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "limithit",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column("key_sha256", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    )
    op.create_index("ix_limithit_key_sha256_at", "limithit", ["key_sha256", "at"])
    op.create_index("ix_limithit_expires_at", "limithit", ["expires_at"])
    with op.batch_alter_table("run") as batch:
        batch.add_column(
            sa.Column("client_sha256", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
    op.create_index("ix_run_client_sha256", "run", ["client_sha256"])


def downgrade() -> None:
    op.drop_index("ix_run_client_sha256", table_name="run")
    with op.batch_alter_table("run") as batch:
        batch.drop_column("client_sha256")
    op.drop_index("ix_limithit_expires_at", table_name="limithit")
    op.drop_index("ix_limithit_key_sha256_at", table_name="limithit")
    op.drop_table("limithit")

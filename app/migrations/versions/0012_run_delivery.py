"""Run delivery: the attempt counter a fleet of workers compares-and-sets, the client's
Idempotency-Key, and when the code started.

Revision ID: 0012_run_delivery
Revises: 0011_recovery_codes
Create Date: 2026-11-23 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0012_run_delivery"
down_revision: str | None = "0011_recovery_codes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.add_column(sa.Column("attempt", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(
            sa.Column("idempotency_key", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
        batch.add_column(
            sa.Column("started_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True)
        )
    # NULL keys never collide: runs sent without a key are unaffected.
    op.create_index(
        "ux_run_visitor_idempotency_key", "run", ["visitor", "idempotency_key"], unique=True
    )


def downgrade() -> None:
    op.drop_index("ux_run_visitor_idempotency_key", table_name="run")
    with op.batch_alter_table("run") as batch:
        batch.drop_column("started_at")
        batch.drop_column("idempotency_key")
        batch.drop_column("attempt")

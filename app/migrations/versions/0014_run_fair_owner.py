"""Fair share: a run keeps whom the sandbox schedules it as (a keyed hash of the account, or
of a guest's address), so that every delivery of it, from any replica, takes its turn as
that owner.

Revision ID: 0014_run_fair_owner
Revises: 0013_shared_limits
Create Date: 2026-11-26 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0014_run_fair_owner"
down_revision: str | None = "0013_shared_limits"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.add_column(
            sa.Column("fair_owner", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.drop_column("fair_owner")

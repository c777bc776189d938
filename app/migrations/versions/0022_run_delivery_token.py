"""The delivery a fleet's run was started for: the database decides a run's start before
its code reaches a worker, and an agent that asks again (its answer lost in a wipe of Redis)
must hear the same answer.

Revision ID: 0022_run_delivery_token
Revises: 0021_short_learning_steps
Create Date: 2026-11-29 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0022_run_delivery_token"
down_revision: str | None = "0021_short_learning_steps"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.add_column(
            sa.Column("delivery", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.drop_column("delivery")

"""Each account's choice of short learning steps in spaced review: off (the default), a right
answer waits at least a day; on, a new question comes back minutes later until it has been
answered right at each step.

Revision ID: 0021_short_learning_steps
Revises: 0020_round_draft
Create Date: 2026-11-29 04:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_short_learning_steps"
down_revision: str | None = "0020_round_draft"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("user") as batch:
        batch.add_column(
            sa.Column(
                "short_learning_steps", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("user") as batch:
        batch.drop_column("short_learning_steps")

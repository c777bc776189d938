"""Users who may see the authoring pages.

Revision ID: 0007_admins
Revises: 0006_review
Create Date: 2026-11-23 02:25:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_admins"
down_revision: str | None = "0006_review"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("user") as batch:
        batch.add_column(
            sa.Column("is_admin", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("user") as batch:
        batch.drop_column("is_admin")

"""Runs keep the code they ran (before, only its SHA-256 and size), for the run history and
the export. Runs made before keep an empty code.

Revision ID: 0009_run_code
Revises: 0008_labs
Create Date: 2026-11-23 04:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_run_code"
down_revision: str | None = "0008_labs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.add_column(sa.Column("code", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.drop_column("code")

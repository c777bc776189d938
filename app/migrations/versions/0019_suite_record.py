"""Each exercise's suite record: how its hidden tests were proven (automatic mutants killed of
those made, authored bugs, correct alternatives, the seeds tried and when), shown to learners.

Revision ID: 0019_suite_record
Revises: 0018_mock_coding
Create Date: 2026-11-28 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_suite_record"
down_revision: str | None = "0018_mock_coding"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("exercise") as batch:
        batch.add_column(sa.Column("suite_record", sa.Text(), nullable=False, server_default="{}"))


def downgrade() -> None:
    with op.batch_alter_table("exercise") as batch:
        batch.drop_column("suite_record")

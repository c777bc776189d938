"""Questions may show code with their prompt: its source (for the API) and its highlighted
HTML (for the pages), both empty for the questions made before.

Revision ID: 0015_question_code
Revises: 0014_run_fair_owner
Create Date: 2026-11-26 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_question_code"
down_revision: str | None = "0014_run_fair_owner"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("question") as batch:
        batch.add_column(sa.Column("code", sa.Text(), nullable=False, server_default=""))
        batch.add_column(sa.Column("code_html", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("question") as batch:
        batch.drop_column("code_html")
        batch.drop_column("code")

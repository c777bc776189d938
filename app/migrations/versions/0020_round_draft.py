"""A coding round keeps the code in its editor as the learner types, and when that draft is
graded at the end of the round.

Revision ID: 0020_round_draft
Revises: 0019_suite_record
Create Date: 2026-11-29 04:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0020_round_draft"
down_revision: str | None = "0019_suite_record"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_time = sqlmodel.sql.sqltypes.UTCDateTime


def upgrade() -> None:
    with op.batch_alter_table("codinground") as batch:
        batch.add_column(sa.Column("draft_code", sa.Text(), nullable=True))
        batch.add_column(sa.Column("draft_saved_at", _time(), nullable=True))
        batch.add_column(sa.Column("draft_graded_at", _time(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("codinground") as batch:
        batch.drop_column("draft_graded_at")
        batch.drop_column("draft_saved_at")
        batch.drop_column("draft_code")

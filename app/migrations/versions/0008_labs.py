"""Labs: the items a lab times, and the measurements lab runs print.

Revision ID: 0008_labs
Revises: 0007_admins
Create Date: 2026-11-23 02:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0008_labs"
down_revision: str | None = "0007_admins"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("item") as batch:
        batch.add_column(
            sa.Column(
                "measures",
                sqlmodel.sql.sqltypes.AutoString(length=500),
                nullable=False,
                server_default="",
            )
        )
    op.create_table(
        "labmeasurement",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("label", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("device", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("backend", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
        sa.Column("verdict", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
        sa.Column("speedup", sa.Float(), nullable=False),
        sa.Column("eager_ms", sa.Float(), nullable=False),
        sa.Column("compiled_ms", sa.Float(), nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
        sa.Column("measured_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_labmeasurement_item_id"), "labmeasurement", ["item_id"])
    op.create_index(op.f("ix_labmeasurement_run_id"), "labmeasurement", ["run_id"])
    op.create_index(op.f("ix_labmeasurement_measured_at"), "labmeasurement", ["measured_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_labmeasurement_measured_at"), table_name="labmeasurement")
    op.drop_index(op.f("ix_labmeasurement_run_id"), table_name="labmeasurement")
    op.drop_index(op.f("ix_labmeasurement_item_id"), table_name="labmeasurement")
    op.drop_table("labmeasurement")
    with op.batch_alter_table("item") as batch:
        batch.drop_column("measures")

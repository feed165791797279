"""`auth_epoch`, kept current by triggers, so that sessions can be cached safely.

Revision ID: 0009_auth_epoch
Revises: 0008_files
"""

import sqlalchemy as sa
from alembic import op

from meadhall.db.migrations.frozen import auth_epoch_0009

revision = "0009_auth_epoch"
down_revision = "0008_files"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "auth_epoch",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auth_epoch")),
        if_not_exists=True,
    )
    auth_epoch_0009.create_auth_epoch_triggers(op)


def downgrade() -> None:
    pass

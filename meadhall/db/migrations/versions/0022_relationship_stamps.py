"""`relationship_stamps`: per user, a value that changes (to one never used before) with every change of the user's
own relationship rows, kept by triggers. A process keeps a user's friends under it and reads them again only when
it moved: a status change of a user with 1,000 friends then reads one value instead of 1,000 ids.

Revision ID: 0022_relationship_stamps
Revises: 0021_relationships_by_type
"""

import sqlalchemy as sa
from alembic import op

from meadhall.db.migrations.frozen import relationship_stamps_0022

revision = "0022_relationship_stamps"
down_revision = "0021_relationships_by_type"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "relationship_stamps",
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("stamp", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_relationship_stamps_user_id_users",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", name="pk_relationship_stamps"),
        if_not_exists=True,
    )
    relationship_stamps_0022.create_relationship_stamp_triggers(op)


def downgrade() -> None:
    relationship_stamps_0022.drop_relationship_stamp_triggers(op)
    op.drop_table("relationship_stamps", if_exists=True)

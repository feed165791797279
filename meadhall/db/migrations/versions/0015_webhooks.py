"""Room webhooks (docs/webhooks.md).

Revision ID: 0015_webhooks
Revises: 0014_outbound
"""

import sqlalchemy as sa
from alembic import op

revision = "0015_webhooks"
down_revision = "0014_outbound"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("avatar_file_id", sa.BigInteger(), nullable=True),
        sa.Column("creator_id", sa.BigInteger(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["guild_id"], ["guilds.id"], name="fk_webhooks_guild_id_guilds", ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["channel_id"], ["channels.id"], name="fk_webhooks_channel_id_channels",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_webhooks"),
        if_not_exists=True,
    )
    op.create_index("ix_webhooks_channel_id", "webhooks", ["channel_id"], unique=False, if_not_exists=True)
    op.create_index("ix_webhooks_guild_id", "webhooks", ["guild_id"], unique=False, if_not_exists=True)


def downgrade() -> None:
    pass

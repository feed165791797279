"""Messages, reactions and read states.

Revision ID: 0005_messages
Revises: 0004_guilds
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_messages"
down_revision = "0004_guilds"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "messages",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=True),
        sa.Column("author_id", sa.BigInteger(), nullable=True),
        sa.Column("webhook_id", sa.BigInteger(), nullable=True),
        sa.Column("webhook_name", sa.String(length=80), nullable=True),
        sa.Column("webhook_avatar", sa.String(length=2048), nullable=True),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("content_norm", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("recipient_id", sa.BigInteger(), nullable=True),
        sa.Column("system_event", sa.JSON(), nullable=True),
        sa.Column("nonce", sa.String(length=64), nullable=True),
        sa.Column("reply_to_id", sa.BigInteger(), nullable=True),
        sa.Column("mentions", sa.JSON(), nullable=False),
        sa.Column("mention_channels", sa.JSON(), nullable=False),
        sa.Column("mention_everyone", sa.Boolean(), nullable=False),
        sa.Column("suppress_embeds", sa.Boolean(), nullable=False),
        sa.Column("pinned", sa.Boolean(), nullable=False),
        sa.Column("pinned_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("edited_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["channel_id"], ["channels.id"], name=("fk_messages_channel_id_channels"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=("pk_messages")),
        if_not_exists=True,
    )
    op.create_index(
        "ix_messages_channel_id_id", "messages", ["channel_id", "id"], unique=False, if_not_exists=True
    )
    op.create_table(
        "read_states",
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("last_read_message_id", sa.BigInteger(), nullable=True),
        sa.Column("mention_count", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"], ["channels.id"], name=("fk_read_states_channel_id_channels"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=("fk_read_states_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", "channel_id", name="pk_read_states"),
        if_not_exists=True,
    )
    op.create_table(
        "reactions",
        sa.Column("message_id", sa.BigInteger(), nullable=False),
        sa.Column("emoji", sa.String(length=100), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["message_id"], ["messages.id"], name=("fk_reactions_message_id_messages"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("message_id", "emoji", "user_id", name="pk_reactions"),
        if_not_exists=True,
    )


def downgrade() -> None:
    op.drop_table("reactions")
    op.drop_table("read_states")
    op.drop_table("messages")

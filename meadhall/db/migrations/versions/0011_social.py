"""Relationships, conversation participants, calls; `channels.is_group` and `channels.dm_pair` for
conversations (docs/social.md).

Revision ID: 0011_social
Revises: 0010_message_flags
"""

import sqlalchemy as sa
from alembic import op

revision = "0011_social"
down_revision = "0010_message_flags"
branch_labels = None
depends_on = None


def upgrade() -> None:
    room_columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("channels")}
    # Plain ADD COLUMN: a batch operation would rebuild the table on SQLite and lose its triggers.
    if "is_group" not in room_columns:
        op.add_column("channels", sa.Column("is_group", sa.Boolean(), nullable=False, server_default=sa.false()))
    if "dm_pair" not in room_columns:
        op.add_column("channels", sa.Column("dm_pair", sa.String(length=48), nullable=True))
    op.create_index("ix_channels_dm_pair", "channels", ["dm_pair"], unique=False, if_not_exists=True)

    op.create_table(
        "relationships",
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("other_id", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_relationships_user_id_users", ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["other_id"], ["users.id"], name="fk_relationships_other_id_users",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "other_id", name="pk_relationships"),
        if_not_exists=True,
    )
    op.create_index("ix_relationships_other_id", "relationships", ["other_id"], unique=False, if_not_exists=True)

    op.create_table(
        "dm_participants",
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["channel_id"], ["channels.id"], name="fk_dm_participants_channel_id_channels",
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_dm_participants_user_id_users",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("channel_id", "user_id", name="pk_dm_participants"),
        if_not_exists=True,
    )
    op.create_index("ix_dm_participants_user_id", "dm_participants", ["user_id"], unique=False, if_not_exists=True)

    op.create_table(
        "calls",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("initiator_id", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("media", sa.String(length=8), nullable=False),
        sa.Column("ongoing_channel_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("end_reason", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(["channel_id"], ["channels.id"], name="fk_calls_channel_id_channels",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_calls"),
        sa.UniqueConstraint("ongoing_channel_id", name="uq_calls_ongoing_channel_id"),
        if_not_exists=True,
    )
    op.create_index("ix_calls_channel_id_id", "calls", ["channel_id", "id"], unique=False, if_not_exists=True)

    op.create_table(
        "call_participants",
        sa.Column("call_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("microphone", sa.Boolean(), nullable=False),
        sa.Column("camera", sa.Boolean(), nullable=False),
        sa.Column("screen", sa.Boolean(), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("left_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["call_id"], ["calls.id"], name="fk_call_participants_call_id_calls",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("call_id", "user_id", name="pk_call_participants"),
        if_not_exists=True,
    )
    op.create_index("ix_call_participants_user_id", "call_participants", ["user_id"], unique=False,
                    if_not_exists=True)


def downgrade() -> None:
    pass

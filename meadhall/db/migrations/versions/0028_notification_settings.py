"""Notification settings (docs/push.md, "Notification levels"): `guild_notification_settings`, a user's level,
mute and `@everyone` choice for one server, and `room_notification_settings`, level and mute for one room or
conversation. Only settings that differ from the defaults have a row; nothing to fill.

A server's row, and the rows of its rooms, hang on the membership by a composite key with ON DELETE CASCADE
(leaving, a kick, a ban and the server's deletion remove them); a room's row also on the room; a
conversation's row on the participation.

Revision ID: 0028_notification_settings
Revises: 0027_audit_keyed_chain
"""

import sqlalchemy as sa
from alembic import op

revision = "0028_notification_settings"
down_revision = "0027_audit_keyed_chain"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "guild_notification_settings",
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("level", sa.String(length=8), nullable=False),
        sa.Column("muted_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("suppress_everyone", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", "guild_id", name="pk_guild_notification_settings"),
        sa.ForeignKeyConstraint(["guild_id", "user_id"], ["members.guild_id", "members.user_id"],
                                name="fk_guild_notification_settings_guild_id_members", ondelete="CASCADE"),
        if_not_exists=True,
    )
    op.create_index("ix_guild_notification_settings_guild_id_level", "guild_notification_settings",
                    ["guild_id", "level"], if_not_exists=True)
    op.create_table(
        "room_notification_settings",
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=True),
        sa.Column("conversation_id", sa.BigInteger(), nullable=True),
        sa.Column("level", sa.String(length=8), nullable=False),
        sa.Column("muted_until", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("user_id", "channel_id", name="pk_room_notification_settings"),
        sa.ForeignKeyConstraint(["channel_id"], ["channels.id"], name="fk_room_notification_settings_channel_id_channels",
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["guild_id", "user_id"], ["members.guild_id", "members.user_id"],
                                name="fk_room_notification_settings_guild_id_members", ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["conversation_id", "user_id"], ["dm_participants.channel_id", "dm_participants.user_id"],
                                name="fk_room_notification_settings_conversation_id_dm_participants",
                                ondelete="CASCADE"),
        if_not_exists=True,
    )
    op.create_index("ix_room_notification_settings_channel_id_level", "room_notification_settings",
                    ["channel_id", "level"], if_not_exists=True)


def downgrade() -> None:
    op.drop_index("ix_room_notification_settings_channel_id_level", "room_notification_settings", if_exists=True)
    op.drop_table("room_notification_settings", if_exists=True)
    op.drop_index("ix_guild_notification_settings_guild_id_level", "guild_notification_settings", if_exists=True)
    op.drop_table("guild_notification_settings", if_exists=True)

"""Notification settings (docs/push.md, "Notification levels"): a user's level, mute and `@everyone` choice per
server, and level and mute per room or conversation. Only settings that differ from the defaults have a row.

Each row hangs on what makes it meaningful, so the database removes it with that: a server's setting and the
settings of its rooms with the membership (leave, kick, ban, the server's deletion), a room's with the room, a
conversation's with the participation (migration 0028)."""

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    PrimaryKeyConstraint,
    String,
    Table,
)

from meadhall.db.schema.base import metadata, ts_column

guild_notification_settings = Table(
    "guild_notification_settings",
    metadata,
    Column("user_id", BigInteger, nullable=False),
    Column("guild_id", BigInteger, nullable=False),
    Column("level", String(8), nullable=False),  # all | mentions | nothing
    ts_column("muted_until", nullable=True),
    Column("suppress_everyone", Boolean, nullable=False),
    PrimaryKeyConstraint("user_id", "guild_id", name="pk_guild_notification_settings"),
    ForeignKeyConstraint(["guild_id", "user_id"], ["members.guild_id", "members.user_id"],
                         name="fk_guild_notification_settings_guild_id_members", ondelete="CASCADE"),
    # Web Push looks up a server's `all` settings (and those of the people a message names) per message.
    Index("ix_guild_notification_settings_guild_id_level", "guild_id", "level"),
)

room_notification_settings = Table(
    "room_notification_settings",
    metadata,
    Column("user_id", BigInteger, nullable=False),
    Column("channel_id", BigInteger, ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
    # Exactly one of the two is set: the room's server, or the conversation (= channel_id). Each is half of a
    # composite key onto the membership or the participation; a NULL half is not checked and cascades nothing.
    Column("guild_id", BigInteger, nullable=True),
    Column("conversation_id", BigInteger, nullable=True),
    Column("level", String(8), nullable=False),  # default | all | mentions | nothing
    ts_column("muted_until", nullable=True),
    PrimaryKeyConstraint("user_id", "channel_id", name="pk_room_notification_settings"),
    ForeignKeyConstraint(["guild_id", "user_id"], ["members.guild_id", "members.user_id"],
                         name="fk_room_notification_settings_guild_id_members", ondelete="CASCADE"),
    ForeignKeyConstraint(["conversation_id", "user_id"], ["dm_participants.channel_id", "dm_participants.user_id"],
                         name="fk_room_notification_settings_conversation_id_dm_participants", ondelete="CASCADE"),
    Index("ix_room_notification_settings_channel_id_level", "channel_id", "level"),
)

"""Guilds, roles, rooms, overrides, members, invitations, bans, personal templates (the OpenAPI document)."""

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    false,
)

from meadhall.db.schema.base import id_column, metadata, ts_column

guilds = Table(
    "guilds",
    metadata,
    id_column(),
    Column("name", String(100), nullable=False),
    Column("name_norm", String(200), nullable=False),
    Column("description", Text, nullable=True),
    Column("icon_file_id", BigInteger, nullable=True),
    Column("banner_file_id", BigInteger, nullable=True),
    Column("splash_file_id", BigInteger, nullable=True),
    Column("owner_id", BigInteger, ForeignKey("users.id"), nullable=False),
    Column("member_count", Integer, nullable=False),
    Column("system_channel_id", BigInteger, nullable=True),
    Column("public", Boolean, nullable=False),
    Column("public_invite_code", String(16), nullable=True),
    Column("is_main", Boolean, nullable=False),
    ts_column("created_at"),
    # Bumped by triggers on every permission-relevant change (migration 0007); read by the cache.
    Column("perm_version", BigInteger, nullable=False, server_default="0"),
    Index("ix_guilds_owner_id", "owner_id"),
)

roles = Table(
    "roles",
    metadata,
    id_column(),
    Column("guild_id", BigInteger, ForeignKey("guilds.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("color", Integer, nullable=False),
    Column("position", Integer, nullable=False),
    Column("permissions", BigInteger, nullable=False),
    Column("hoist", Boolean, nullable=False),
    Column("frame_id", BigInteger, nullable=True),
    Column("icon_id", BigInteger, nullable=True),
    Column("is_default", Boolean, nullable=False),
    ts_column("created_at"),
    Index("ix_roles_guild_id_position", "guild_id", "position"),
)

channels = Table(
    "channels",
    metadata,
    id_column(),
    Column("guild_id", BigInteger, ForeignKey("guilds.id", ondelete="CASCADE"), nullable=True),
    Column("type", String(16), nullable=False),
    Column("name", String(100), nullable=True),
    Column("topic", Text, nullable=True),
    Column("position", Integer, nullable=False),
    Column("parent_id", BigInteger, nullable=True),
    Column("slowmode_seconds", Integer, nullable=False),
    Column("user_limit", Integer, nullable=True),
    Column("background_file_id", BigInteger, nullable=True),
    Column("icon_file_id", BigInteger, nullable=True),
    Column("dm_owner_id", BigInteger, nullable=True),
    # Conversations only: a group has three or more participants; a 1:1 carries the key of its pair
    # ("<low id>:<high id>") so that opening it again finds the oldest one in one indexed lookup.
    Column("is_group", Boolean, nullable=False, default=False, server_default=false()),
    Column("dm_pair", String(48), nullable=True),
    Column("last_message_id", BigInteger, nullable=True),
    ts_column("created_at"),
    # Kept by triggers on messages (migration 0010): `message_version` rises with every change to the room's
    # messages, so cached history pages are valid exactly while it is unchanged; `has_private` says a
    # page may differ per viewer.
    Column("message_version", BigInteger, nullable=False, default=0, server_default="0"),
    Column("has_private", Boolean, nullable=False, default=False, server_default=false()),
    Index("ix_channels_guild_id", "guild_id"),
    Index("ix_channels_dm_pair", "dm_pair"),
)

permission_overrides = Table(
    "permission_overrides",
    metadata,
    Column("channel_id", BigInteger, ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
    Column("target_id", BigInteger, nullable=False),
    Column("kind", String(8), nullable=False),
    Column("allow", BigInteger, nullable=False),
    Column("deny", BigInteger, nullable=False),
    PrimaryKeyConstraint("channel_id", "target_id", name="pk_permission_overrides"),
)

members = Table(
    "members",
    metadata,
    Column("guild_id", BigInteger, ForeignKey("guilds.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("nick", String(64), nullable=True),
    Column("nick_norm", String(128), nullable=True),
    ts_column("joined_at"),
    ts_column("timeout_until", nullable=True),
    PrimaryKeyConstraint("guild_id", "user_id", name="pk_members"),
    Index("ix_members_user_id", "user_id"),
)

member_roles = Table(
    "member_roles",
    metadata,
    Column("guild_id", BigInteger, nullable=False),
    Column("user_id", BigInteger, nullable=False),
    Column("role_id", BigInteger, ForeignKey("roles.id", ondelete="CASCADE"), nullable=False),
    PrimaryKeyConstraint("guild_id", "user_id", "role_id", name="pk_member_roles"),
    ForeignKeyConstraint(
        ["guild_id", "user_id"], ["members.guild_id", "members.user_id"],
        name="fk_member_roles_guild_id_members", ondelete="CASCADE",
    ),
    Index("ix_member_roles_role_id", "role_id"),
)

invites = Table(
    "invites",
    metadata,
    Column("code", String(16), primary_key=True),
    Column("guild_id", BigInteger, ForeignKey("guilds.id", ondelete="CASCADE"), nullable=False),
    Column("channel_id", BigInteger, ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
    Column("inviter_id", BigInteger, nullable=True),
    Column("max_age_seconds", Integer, nullable=False),
    Column("max_uses", Integer, nullable=False),
    Column("uses", Integer, nullable=False),
    ts_column("expires_at", nullable=True),
    Column("is_public", Boolean, nullable=False),
    Column("background_file_id", BigInteger, nullable=True),
    ts_column("created_at"),
    Index("ix_invites_guild_id", "guild_id"),
)

guild_bans = Table(
    "guild_bans",
    metadata,
    Column("guild_id", BigInteger, ForeignKey("guilds.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", BigInteger, nullable=False),
    Column("reason", Text, nullable=True),
    Column("author_id", BigInteger, nullable=True),
    ts_column("created_at"),
    PrimaryKeyConstraint("guild_id", "user_id", name="pk_guild_bans"),
)

templates = Table(
    "templates",
    metadata,
    id_column(),
    Column("owner_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("description", Text, nullable=True),
    Column("source_guild_id", BigInteger, ForeignKey("guilds.id", ondelete="SET NULL"), nullable=True),
    Column("structure", JSON, nullable=False),
    ts_column("created_at"),
    Index("ix_templates_owner_id", "owner_id"),
)

"""A guild's custom emojis, sounds and cosmetics gallery, and the users' personal styles
(docs/customisation.md).

Names are unique case-insensitively through `name_norm` (filled with `core.text.norm` in Python); the
per-guild counts are checked by the services under the guild's row lock. The image or sound itself is a
row of `files` (owner `emoji`, `sound`, `cosmetic`), deleted with its holder.
"""

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    UniqueConstraint,
)

from meadhall.db.schema.base import id_column, metadata, ts_column

emojis = Table(
    "emojis",
    metadata,
    id_column(),
    Column("guild_id", BigInteger, ForeignKey("guilds.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(32), nullable=False),
    Column("name_norm", String(32), nullable=False),
    Column("file_id", BigInteger, nullable=False),
    Column("animated", Boolean, nullable=False),
    Column("creator_id", BigInteger, nullable=True),
    ts_column("created_at"),
    UniqueConstraint("guild_id", "name_norm", name="uq_emojis_guild_id_name_norm"),
)

sounds = Table(
    "sounds",
    metadata,
    id_column(),
    Column("guild_id", BigInteger, ForeignKey("guilds.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("name", String(32), nullable=False),
    Column("name_norm", String(32), nullable=False),
    Column("emoji", String(64), nullable=True),
    # Interface sounds only; NULL for soundboard sounds, so the unique constraint holds one sound per event.
    Column("palette_event", String(16), nullable=True),
    Column("file_id", BigInteger, nullable=False),
    Column("duration_ms", Integer, nullable=True),
    Column("creator_id", BigInteger, nullable=True),
    ts_column("created_at"),
    UniqueConstraint("guild_id", "kind", "name_norm", name="uq_sounds_guild_id_kind_name_norm"),
    UniqueConstraint("guild_id", "palette_event", name="uq_sounds_guild_id_palette_event"),
)

cosmetics = Table(
    "cosmetics",
    metadata,
    id_column(),
    Column("guild_id", BigInteger, ForeignKey("guilds.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(8), nullable=False),
    Column("name", String(32), nullable=False),
    Column("file_id", BigInteger, nullable=False),
    ts_column("created_at"),
    Index("ix_cosmetics_guild_id", "guild_id"),
)

# One row per user and scope: `scope_key` is the guild id for scope `guild`, 0 for scope `friends` (a
# primary key cannot hold NULL, and upserts need one conflict target on every database).
user_styles = Table(
    "user_styles",
    metadata,
    Column("user_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("scope_key", BigInteger, nullable=False),
    Column("guild_id", BigInteger, ForeignKey("guilds.id", ondelete="CASCADE"), nullable=True),
    Column("frame_id", BigInteger, nullable=True),
    Column("icon_id", BigInteger, nullable=True),
    Column("color", Integer, nullable=True),
    ts_column("updated_at"),
    PrimaryKeyConstraint("user_id", "scope_key", name="pk_user_styles"),
    Index("ix_user_styles_guild_id", "guild_id"),
)

__all__ = ["emojis", "sounds", "cosmetics", "user_styles"]

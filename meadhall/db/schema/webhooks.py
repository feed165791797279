"""Room webhooks (docs/webhooks.md): a name, an optional avatar (a `files` row of owner `webhook`) and the
SHA-256 digest of the execution token; the token itself is shown once and never stored."""

from sqlalchemy import BigInteger, Column, ForeignKey, Index, String, Table

from meadhall.db.schema.base import id_column, metadata, ts_column

webhooks = Table(
    "webhooks",
    metadata,
    id_column(),
    Column("guild_id", BigInteger, ForeignKey("guilds.id", ondelete="CASCADE"), nullable=False),
    Column("channel_id", BigInteger, ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(80), nullable=False),
    Column("avatar_file_id", BigInteger, nullable=True),
    Column("creator_id", BigInteger, nullable=False),
    Column("token_hash", String(64), nullable=False),
    ts_column("created_at"),
    Index("ix_webhooks_channel_id", "channel_id"),
    Index("ix_webhooks_guild_id", "guild_id"),
)

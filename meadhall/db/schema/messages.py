"""Messages, reactions and read states (the OpenAPI document)."""

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    false,
)

from meadhall.db.schema.base import id_column, metadata, ts_column

messages = Table(
    "messages",
    metadata,
    id_column(),
    Column("channel_id", BigInteger, ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
    Column("guild_id", BigInteger, nullable=True),
    Column("author_id", BigInteger, nullable=True),
    Column("webhook_id", BigInteger, nullable=True),
    Column("webhook_name", String(80), nullable=True),
    Column("webhook_avatar", String(2048), nullable=True),
    Column("content", Text, nullable=False),
    # Casefolded copy for case-insensitive search in every script (SQLite folds only ASCII).
    Column("content_norm", Text, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("recipient_id", BigInteger, nullable=True),
    Column("system_event", JSON, nullable=True),
    Column("nonce", String(64), nullable=True),
    Column("reply_to_id", BigInteger, nullable=True),
    Column("mentions", JSON, nullable=False),
    Column("mention_channels", JSON, nullable=False),
    Column("mention_everyone", Boolean, nullable=False),
    Column("suppress_embeds", Boolean, nullable=False),
    Column("pinned", Boolean, nullable=False),
    ts_column("pinned_at", nullable=True),
    ts_column("created_at"),
    ts_column("edited_at", nullable=True),
    # Set by triggers (db/dialect.py) once a reaction or an attachment exists, and never cleared: a page
    # asks for reactions and attachments only of the messages that may have some.
    Column("reacted", Boolean, nullable=False, default=False, server_default=false()),
    Column("has_attachments", Boolean, nullable=False, default=False, server_default=false()),
    Index("ix_messages_channel_id_id", "channel_id", "id"),
)

reactions = Table(
    "reactions",
    metadata,
    Column("message_id", BigInteger, ForeignKey("messages.id", ondelete="CASCADE"), nullable=False),
    Column("emoji", String(100), nullable=False),
    Column("user_id", BigInteger, nullable=False),
    ts_column("created_at"),
    PrimaryKeyConstraint("message_id", "emoji", "user_id", name="pk_reactions"),
)

read_states = Table(
    "read_states",
    metadata,
    Column("user_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("channel_id", BigInteger, ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
    Column("last_read_message_id", BigInteger, nullable=True),
    Column("mention_count", Integer, nullable=False),
    ts_column("updated_at"),
    PrimaryKeyConstraint("user_id", "channel_id", name="pk_read_states"),
)

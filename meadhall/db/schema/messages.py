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
    # Set by triggers (migration 0010) once a reaction or an attachment exists, and never cleared: a page
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

# Mentions kept where counting them is an index range (OpenAPI: listReadStates, `mention_count`): an acknowledgement
# counts the reader's mentions after the read mark in these two tables, never in the room's messages, so it costs
# the same in a room of a hundred messages and of a million (docs/mentions.md).
# `user_mentions`: one row per user a message names (`<@id>`, or the recipient of a private message), the author
# never. Written with the message (messages/queries.insert_message) and gone with it by cascade.
user_mentions = Table(
    "user_mentions",
    metadata,
    Column("user_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("channel_id", BigInteger, nullable=False),
    Column("message_id", BigInteger, ForeignKey("messages.id", ondelete="CASCADE"), nullable=False),
    PrimaryKeyConstraint("user_id", "channel_id", "message_id", name="pk_user_mentions"),
    # The cascade from a deleted message finds its rows by this index, not by reading the table.
    Index("ix_user_mentions_message_id", "message_id"),
    sqlite_with_rowid=False,
)

# `everyone_mentions`: one row per `@everyone` message, not one per member: a room's members are not
# expanded at send (a guild of 10,000 members would write 10,000 rows per message and keep them), and whoever
# may acknowledge the room may read it. The author's own are skipped when counting.
everyone_mentions = Table(
    "everyone_mentions",
    metadata,
    Column("channel_id", BigInteger, nullable=False),
    Column("message_id", BigInteger, ForeignKey("messages.id", ondelete="CASCADE"), nullable=False),
    Column("author_id", BigInteger, nullable=True),
    PrimaryKeyConstraint("channel_id", "message_id", name="pk_everyone_mentions"),
    Index("ix_everyone_mentions_message_id", "message_id"),
    sqlite_with_rowid=False,
)

# A send's nonce, written in the send's own transaction (docs/mentions.md, "Repeated sends"): a retry of the same
# author in the same room within 5 minutes finds the first message here whichever node took the first attempt and
# whenever that node died after its commit. No foreign key onto the message: the key is claimed before the message
# row exists (a repeat costs no validation), and a key whose message was deleted is taken over by the next send.
message_nonces = Table(
    "message_nonces",
    metadata,
    Column("channel_id", BigInteger, nullable=False),
    Column("author_id", BigInteger, nullable=False),
    Column("nonce", String(64), nullable=False),
    Column("message_id", BigInteger, nullable=False),
    ts_column("created_at"),
    PrimaryKeyConstraint("channel_id", "author_id", "nonce", name="pk_message_nonces"),
    # The sweep of keys older than the window is an index range.
    Index("ix_message_nonces_created_at", "created_at"),
)

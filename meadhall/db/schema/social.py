"""Relationships, direct-conversation participants and calls (docs/social.md).

Conversations themselves are rows of `channels` with `type = 'dm'` and no guild: messages, pins,
reactions and read states of a conversation use the message tables like any room.
"""

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    PrimaryKeyConstraint,
    String,
    Table,
    UniqueConstraint,
)

from meadhall.db.schema.base import id_column, metadata, ts_column

# One row per direction: `type` is what `other_id` is to `user_id` (`friend`, `incoming`, `outgoing`,
# `blocked`). A friendship or a pending request has both rows; a block has only the blocker's row (the
# blocked user learns nothing), or two `blocked` rows when both blocked each other.
relationships = Table(
    "relationships",
    metadata,
    Column("user_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("other_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("type", String(16), nullable=False),
    ts_column("since"),
    PrimaryKeyConstraint("user_id", "other_id", name="pk_relationships"),
    Index("ix_relationships_other_id", "other_id"),
    # Covering: a user's friends (or blocks) by id, read from the index alone (migration 0021).
    Index("ix_relationships_user_type_other", "user_id", "type", "other_id"),
)

# A value that changes, to one never seen before, with every change to a user's own relationship rows (the ones
# with their `user_id`): triggers keep it (migration 0022), so that a process may keep a user's
# friends under it (social/relationships/friends.py) and trust them exactly while it is current. No row: never
# changed since the migration, nothing may be kept.
relationship_stamps = Table(
    "relationship_stamps",
    metadata,
    Column("user_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, autoincrement=False),
    Column("stamp", BigInteger, nullable=False),
)

dm_participants = Table(
    "dm_participants",
    metadata,
    Column("channel_id", BigInteger, ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    ts_column("joined_at"),
    PrimaryKeyConstraint("channel_id", "user_id", name="pk_dm_participants"),
    Index("ix_dm_participants_user_id", "user_id"),
)

calls = Table(
    "calls",
    metadata,
    id_column(),
    Column("channel_id", BigInteger, ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
    Column("initiator_id", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),
    Column("media", String(8), nullable=False),
    # The conversation's id while the call is ringing or active, NULL once it is finished: the unique
    # constraint makes "one ongoing call per conversation" hold under concurrent starts on any database.
    Column("ongoing_channel_id", BigInteger, nullable=True),
    ts_column("created_at"),
    ts_column("started_at", nullable=True),
    ts_column("ended_at", nullable=True),
    Column("end_reason", String(32), nullable=True),
    UniqueConstraint("ongoing_channel_id", name="uq_calls_ongoing_channel_id"),
    Index("ix_calls_channel_id_id", "channel_id", "id"),
)

call_participants = Table(
    "call_participants",
    metadata,
    Column("call_id", BigInteger, ForeignKey("calls.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", BigInteger, nullable=False),
    Column("state", String(16), nullable=False),
    Column("microphone", Boolean, nullable=False),
    Column("camera", Boolean, nullable=False),
    Column("screen", Boolean, nullable=False),
    ts_column("joined_at", nullable=True),
    ts_column("left_at", nullable=True),
    PrimaryKeyConstraint("call_id", "user_id", name="pk_call_participants"),
    Index("ix_call_participants_user_id", "user_id"),
)

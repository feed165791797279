"""What the service fetches from outside (docs/outbound.md, docs/push.md): the link-preview cache, shared by
every node, and the Web Push subscriptions of users' devices."""

from sqlalchemy import JSON, BigInteger, Column, ForeignKey, Index, Integer, String, Table, Text

from meadhall.db.schema.base import id_column, metadata, ts_column

# Keyed by the SHA-256 of the normalised URL (a URL may be 2048 characters, too long for a portable key).
link_previews = Table(
    "link_previews",
    metadata,
    Column("url_hash", String(64), primary_key=True),
    Column("url", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("card", JSON, nullable=True),
    ts_column("fetched_at"),
    ts_column("expires_at"),
    Index("ix_link_previews_expires_at", "expires_at"),
)

push_subscriptions = Table(
    "push_subscriptions",
    metadata,
    id_column(),
    Column("user_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    # The session that subscribed: however it ends (logout, revocation, password change, ban, ...), the
    # database removes its subscriptions with it (docs/push.md, migration 0024).
    Column("session_id", BigInteger, ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("endpoint", String(2048), nullable=False),
    Column("p256dh", String(128), nullable=False),
    Column("auth", String(64), nullable=False),
    ts_column("created_at"),
    Column("failure_count", Integer, nullable=False, default=0),
    ts_column("last_delivery_at", nullable=True),
    Index("uq_push_subscriptions_endpoint", "endpoint", unique=True),
    Index("ix_push_subscriptions_user_id", "user_id"),
    Index("ix_push_subscriptions_session_id", "session_id"),
)

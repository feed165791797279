"""The media-server webhook journal (docs/voice.md): one row per processed event id, so a webhook the media
server repeats (it retries until it hears 200) has no second effect. Voice states themselves live in the
shared store, not here (meadhall/voice/store.py)."""

from sqlalchemy import Column, Index, PrimaryKeyConstraint, String, Table

from meadhall.db.schema.base import metadata, ts_column

media_webhook_events = Table(
    "media_webhook_events",
    metadata,
    Column("id", String(128), nullable=False),
    Column("event", String(64), nullable=False),
    Column("room", String(128), nullable=True),
    ts_column("received_at"),
    PrimaryKeyConstraint("id", name="pk_media_webhook_events"),
    Index("ix_media_webhook_events_received_at", "received_at"),
)

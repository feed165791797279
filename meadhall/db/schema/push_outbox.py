"""The Web Push outbox (docs/push.md, "A durable queue"): notifications waiting for delivery, written in the
transaction of the message they announce and deleted once delivered or given up."""

from sqlalchemy import Column, Index, Integer, String, Table, Text

from meadhall.db.schema.base import id_column, metadata, ts_column

# `available_at`: when the row may be claimed. The time it was written while nobody holds it; the end of the lease
# while a node delivers it (renewed as long as that node lives), so the rows of a killed node come back on their own.
# `claimed_by` names the holding process (a random token per runtime); `attempts` counts claims, so a row that
# every claimant fails on is given up rather than retried for ever. `body` is the notification as JSON
# (push/outbox.py).
push_outbox = Table(
    "push_outbox",
    metadata,
    id_column(),
    ts_column("created_at"),
    ts_column("available_at"),
    Column("claimed_by", String(32), nullable=True),
    Column("attempts", Integer, nullable=False),
    Column("body", Text, nullable=False),
    Index("ix_push_outbox_available_at", "available_at"),
)

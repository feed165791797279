"""The event outbox: events of a CLI run waiting for a serving process to publish them (docs/architecture.md,
"CLI effects reach live connections")."""

from sqlalchemy import Column, Integer, Table, Text

from meadhall.db.schema.base import metadata, ts_column

# Written in the transaction of the change whose events it holds, drained (read, published, deleted) by every
# serving process. An autoincrement key rather than a snowflake: a CLI process shares the service's NODE_ID,
# and the key orders rows as they were written. `body` is the event's JSON envelope (realtime/events.py).
event_outbox = Table(
    "event_outbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    ts_column("created_at"),
    Column("body", Text, nullable=False),
)

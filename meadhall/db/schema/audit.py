"""One audit store for guild and instance actions (the OpenAPI document), and the instance settings row."""

from sqlalchemy import JSON, BigInteger, Column, Index, Integer, String, Table, Text

from meadhall.db.schema.base import id_column, metadata, ts_column

audit_log = Table(
    "audit_log",
    metadata,
    id_column(),
    Column("action", String(64), nullable=False),
    Column("guild_id", BigInteger, nullable=True),
    Column("actor_id", BigInteger, nullable=True),
    Column("target_type", String(32), nullable=True),
    Column("target_id", BigInteger, nullable=True),
    Column("reason", Text, nullable=True),
    Column("data", JSON, nullable=False),
    ts_column("created_at"),
    Index("ix_audit_log_guild_id_id", "guild_id", "id"),
    Index("ix_audit_log_action_id", "action", "id"),
)

instance_settings = Table(
    "instance_settings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("data", JSON, nullable=False),
    ts_column("updated_at"),
)

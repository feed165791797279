"""One audit store for guild and instance actions (the OpenAPI document), the heads of its tamper-evident
hash chains (docs/audit.md), and the instance settings row."""

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
    # docs/audit.md: SHA-256 (hex) of the predecessor in this entry's chain (None: the first) and of this
    # entry. Nullable only so rows written around the service (a bulk seed) can exist; audit-verify flags them.
    Column("prev_hash", String(64), nullable=True),
    Column("hash", String(64), nullable=True),
    Index("ix_audit_log_guild_id_id", "guild_id", "id"),
    Index("ix_audit_log_action_id", "action", "id"),
    # The instance audit log filters by one of these and pages by id (OpenAPI: listInstanceAuditLog).
    Index("ix_audit_log_actor_id_id", "actor_id", "id"),
    Index("ix_audit_log_target_id_id", "target_id", "id"),
    Index("ix_audit_log_created_at", "created_at"),
)

# One row per chain: `instance` or `guild:<id>`. record() locks and advances it in the writer's transaction,
# so two writers of one chain take turns instead of forking it (docs/audit.md).
audit_chain_heads = Table(
    "audit_chain_heads",
    metadata,
    Column("chain_key", String(32), primary_key=True),
    Column("last_id", BigInteger, nullable=False),
    Column("last_hash", String(64), nullable=True),
    # docs/audit.md, the keyed chain: entries after `keyed_after` carry HMAC-SHA256 hashes, those up to it
    # plain SHA-256 (written before), and `mac` is the head's own HMAC. NULL only until the first start after
    # the upgrade gives every head both (audit/keying.py); a head without them afterwards is a finding.
    Column("keyed_after", BigInteger, nullable=True),
    Column("mac", String(64), nullable=True),
)

instance_settings = Table(
    "instance_settings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("data", JSON, nullable=False),
    ts_column("updated_at"),
)

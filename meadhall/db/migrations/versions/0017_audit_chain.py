"""The tamper-evident audit chain (docs/audit.md): `audit_log.prev_hash` and `hash`, a head row per chain in
`audit_chain_heads`, existing entries linked chain by chain in id order; and the indexes of the instance
audit log's filters (OpenAPI: listInstanceAuditLog).

Revision ID: 0017_audit_chain
Revises: 0016_passkeys
"""

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from alembic import op

from meadhall.db.migrations.frozen.audit_time_0017 import wire_time

revision = "0017_audit_chain"
down_revision = "0016_passkeys"
branch_labels = None
depends_on = None

_BATCH = 1000

_entries = sa.table(
    "audit_log",
    sa.column("id", sa.BigInteger()), sa.column("action", sa.String()), sa.column("guild_id", sa.BigInteger()),
    sa.column("actor_id", sa.BigInteger()), sa.column("target_type", sa.String()),
    sa.column("target_id", sa.BigInteger()), sa.column("reason", sa.Text()), sa.column("data", sa.JSON()),
    sa.column("created_at", sa.DateTime(timezone=True)), sa.column("prev_hash", sa.String()),
    sa.column("hash", sa.String()),
)
_heads = sa.table("audit_chain_heads", sa.column("chain_key", sa.String()), sa.column("last_id", sa.BigInteger()),
                  sa.column("last_hash", sa.String()))


def _sid(value: int | None) -> str | None:
    return None if value is None else str(value)


def chain_key(guild_id: int | None) -> str:
    return "instance" if guild_id is None else f"guild:{guild_id}"


def entry_hash(entry: Mapping[str, Any], prev_hash: str | None) -> str:
    """The hash rule of docs/audit.md, frozen here as shipped (a migration sits below the audit layer);
    tests/audit/test_chain.py checks that audit-verify accepts what this writes."""
    doc = {
        "prev_hash": prev_hash, "id": _sid(entry["id"]), "action": entry["action"],
        "guild_id": _sid(entry["guild_id"]), "actor_id": _sid(entry["actor_id"]),
        "target_type": entry["target_type"], "target_id": _sid(entry["target_id"]), "reason": entry["reason"],
        "data": entry["data"] if entry["data"] is not None else {}, "created_at": wire_time(entry["created_at"]),
    }
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    return hashlib.sha256(raw).hexdigest()


def upgrade() -> None:
    bind = op.get_bind()
    columns = {c["name"] for c in sa.inspect(bind).get_columns("audit_log")}
    # Plain ADD COLUMN of nullable columns: SQLite supports it without rebuilding the table.
    for name in ("prev_hash", "hash"):
        if name not in columns:
            op.add_column("audit_log", sa.Column(name, sa.String(length=64), nullable=True))
    op.create_table(
        "audit_chain_heads",
        sa.Column("chain_key", sa.String(length=32), nullable=False),
        sa.Column("last_id", sa.BigInteger(), nullable=False),
        sa.Column("last_hash", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("chain_key", name="pk_audit_chain_heads"),
        if_not_exists=True,
    )
    op.create_index("ix_audit_log_actor_id_id", "audit_log", ["actor_id", "id"], if_not_exists=True)
    op.create_index("ix_audit_log_target_id_id", "audit_log", ["target_id", "id"], if_not_exists=True)
    op.create_index("ix_audit_log_created_at", "audit_log", ["created_at"], if_not_exists=True)
    _backfill(bind)


def _backfill(bind: Any) -> None:
    """Link the entries that have no hash yet, in id order, each chain continuing from its head; then
    write the heads. Pages of _BATCH rows keep memory flat."""
    heads: dict[str, tuple[int, str | None]] = {
        r.chain_key: (r.last_id, r.last_hash) for r in bind.execute(sa.select(_heads))
    }
    known = set(heads)
    after = -1
    while True:
        rows = list(bind.execute(
            sa.select(_entries).where(_entries.c.id > after, _entries.c.hash.is_(None))
            .order_by(_entries.c.id).limit(_BATCH)).mappings())
        links = []
        for row in rows:
            key = chain_key(row["guild_id"])
            prev = heads.get(key, (0, None))[1]
            digest = entry_hash(row, prev)
            links.append({"entry_id": row["id"], "new_prev_hash": prev, "new_hash": digest})
            heads[key] = (row["id"], digest)
        if links:
            bind.execute(_entries.update().where(_entries.c.id == sa.bindparam("entry_id"))
                         .values(prev_hash=sa.bindparam("new_prev_hash"), hash=sa.bindparam("new_hash")), links)
        if len(rows) < _BATCH:
            break
        after = rows[-1]["id"]
    for key, (last_id, last_hash) in heads.items():
        if key in known:
            bind.execute(_heads.update().where(_heads.c.chain_key == key).values(last_id=last_id, last_hash=last_hash))
        else:
            bind.execute(_heads.insert().values(chain_key=key, last_id=last_id, last_hash=last_hash))


def downgrade() -> None:
    pass

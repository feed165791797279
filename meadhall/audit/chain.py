"""The tamper-evident audit chain (docs/audit.md): every entry carries the SHA-256 of its predecessor in its
chain (one chain per guild, one for instance-level entries) and its own hash over a canonical encoding of
its fields; a head row per chain holds the last entry. Editing an entry breaks its hash, removing one breaks
the link of its successor or leaves the head pointing at nothing.

Hashing is pure (the 0017 migration backfills with a frozen copy of it: a migration sits below this
layer); the head lock runs in the writer's transaction."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core.clock import as_utc, iso
from meadhall.core.ids import id_timestamp_ms, sid
from meadhall.db import dialect
from meadhall.db.schema.audit import audit_chain_heads, audit_log
from meadhall.db.uow import UnitOfWork

INSTANCE_CHAIN = "instance"
VERIFY_BATCH = 1000


def chain_key(guild_id: int | None) -> str:
    return INSTANCE_CHAIN if guild_id is None else f"guild:{guild_id}"


def canonical(entry: Mapping[str, Any] | RowMapping, prev_hash: str | None) -> bytes:
    """The bytes an entry's hash covers: JSON with sorted keys, no spaces, ASCII only; ids as decimal
    strings; `created_at` as UTC with milliseconds and `Z`, so SQLite and PostgreSQL give the same bytes."""
    created_at: datetime = entry["created_at"]
    doc = {
        "prev_hash": prev_hash,
        "id": sid(entry["id"]),
        "action": entry["action"],
        "guild_id": sid(entry["guild_id"]),
        "actor_id": sid(entry["actor_id"]),
        "target_type": entry["target_type"],
        "target_id": sid(entry["target_id"]),
        "reason": entry["reason"],
        "data": entry["data"] if entry["data"] is not None else {},
        "created_at": iso(as_utc(created_at)),
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def entry_hash(entry: Mapping[str, Any] | RowMapping, prev_hash: str | None) -> str:
    return hashlib.sha256(canonical(entry, prev_hash)).hexdigest()


def stored_form(data: dict[str, Any]) -> dict[str, Any]:
    """`data` as the JSON column gives it back (keys become strings, tuples lists), so the hash computed
    at write time is the one recomputed from the stored row."""
    loaded: dict[str, Any] = json.loads(json.dumps(data))
    return loaded


# ---- writing: lock and advance the head of one chain ----------------------------------------------------


async def lock_head(conn: AsyncConnection, key: str) -> tuple[int, str | None]:
    """Create the head row if missing, else lock it (PostgreSQL: the upsert takes the row lock until
    commit; SQLite: its single writer already serialises). Returns the last entry's id and hash."""
    stmt = dialect.upsert(conn, audit_chain_heads, {"chain_key": key, "last_id": 0, "last_hash": None},
                          keys=["chain_key"], update=["chain_key"])
    row = (await conn.execute(stmt.returning(audit_chain_heads.c.last_id, audit_chain_heads.c.last_hash))).one()
    return int(row.last_id), row.last_hash


async def next_entry_id(uow: UnitOfWork, last_id: int) -> int:
    """An id above the chain's last one, so that id order is chain order. Another node's id made in the same
    millisecond (a higher node number) or a node whose clock runs ahead can be higher than ours: wait it out."""
    entry_id = uow.next_id()
    while entry_id <= last_id:
        behind_ms = id_timestamp_ms(last_id) - id_timestamp_ms(entry_id)
        await asyncio.sleep(max(behind_ms, 1) / 1000)
        entry_id = uow.next_id()
    return entry_id


async def advance_head(conn: AsyncConnection, key: str, last_id: int, last_hash: str) -> None:
    await conn.execute(audit_chain_heads.update().where(audit_chain_heads.c.chain_key == key)
                       .values(last_id=last_id, last_hash=last_hash))


# ---- verifying ------------------------------------------------------------------------------------------


@dataclass
class _ChainState:
    last_id: int | None = None
    last_hash: str | None = None
    finding: dict[str, str] | None = None


@dataclass
class Verification:
    chains: int = 0
    entries: int = 0
    findings: list[dict[str, str]] = field(default_factory=list)

    def result(self) -> dict[str, Any]:
        if self.findings:
            return {"status": "tampered", "findings": self.findings}
        return {"status": "ok", "chains": self.chains, "entries": self.entries}


async def _entries(conn: AsyncConnection) -> AsyncIterator[RowMapping]:
    """Every entry in id order, fetched in keyset pages so memory stays flat on a large table."""
    after = -1
    while True:
        stmt = select(audit_log).where(audit_log.c.id > after).order_by(audit_log.c.id).limit(VERIFY_BATCH)
        rows = list((await conn.execute(stmt)).mappings())
        for row in rows:
            yield row
        if len(rows) < VERIFY_BATCH:
            return
        after = rows[-1]["id"]


def _check_entry(state: _ChainState, key: str, row: RowMapping) -> None:
    """The first bad entry of a chain: a hash that does not match its fields (`changed`), or a predecessor
    link that does not name the previous stored entry (`removed_before`)."""
    if state.finding is None:
        problem = None
        if row["hash"] is None or entry_hash(row, row["prev_hash"]) != row["hash"]:
            problem = "changed"
        elif row["prev_hash"] != state.last_hash:
            problem = "removed_before"
        if problem is not None:
            state.finding = {"chain": key, "entry_id": str(row["id"]), "problem": problem}
    state.last_id, state.last_hash = row["id"], row["hash"]


def _check_head(state: _ChainState, key: str, head: RowMapping | None) -> None:
    """The head names the last entry: a head beyond the last stored entry means entries were removed
    at the end; a head that names another entry, or none, means the chain was written around record()."""
    if state.finding is not None:
        return
    if head is None:
        state.finding = {"chain": key, "entry_id": str(state.last_id), "problem": "head_missing"}
    elif head["last_id"] != state.last_id or head["last_hash"] != state.last_hash:
        beyond = state.last_id is None or head["last_id"] > state.last_id
        state.finding = {"chain": key, "entry_id": str(head["last_id"]),
                         "problem": "removed_at_end" if beyond else "head_mismatch"}


async def verify_chains(conn: AsyncConnection) -> Verification:
    """Walk every chain in id order, recompute each hash and link, and compare the heads."""
    states: dict[str, _ChainState] = {}
    out = Verification()
    async for row in _entries(conn):
        key = chain_key(row["guild_id"])
        _check_entry(states.setdefault(key, _ChainState()), key, row)
        out.entries += 1
    heads = {r["chain_key"]: r for r in (await conn.execute(select(audit_chain_heads))).mappings()}
    for key in heads:
        states.setdefault(key, _ChainState())
    for key in sorted(states):
        _check_head(states[key], key, heads.get(key))
        finding = states[key].finding
        if finding is not None:
            out.findings.append(finding)
    out.chains = len(states)
    return out

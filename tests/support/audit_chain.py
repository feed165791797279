"""The audit hash chain as someone with write access to the database sees it (docs/audit.md): its rules
written out independently of meadhall/audit, chains as the service wrote them before the keyed chain, a
head stripped of its marker and HMAC over a chain rewritten in plain SHA-256, and a process starting."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy import insert, select, update

from meadhall.db.schema.audit import audit_chain_heads, audit_log
from meadhall.runtime import Runtime


def _canonical(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _sid(value: Any) -> str | None:
    return None if value is None else str(value)


def plain_hash(row: dict[str, Any]) -> str:
    """An entry's plain SHA-256 (the rule before the keyed chain, and all that the database alone allows)."""
    created = row["created_at"]
    created = created.replace(tzinfo=UTC) if created.tzinfo is None else created.astimezone(UTC)
    doc = {"prev_hash": row["prev_hash"], "id": str(row["id"]), "action": row["action"],
           "guild_id": _sid(row["guild_id"]), "actor_id": _sid(row["actor_id"]),
           "target_type": row["target_type"], "target_id": _sid(row["target_id"]), "reason": row["reason"],
           "data": row["data"],
           "created_at": created.strftime("%Y-%m-%dT%H:%M:%S.") + f"{created.microsecond // 1000:03d}Z"}
    return hashlib.sha256(_canonical(doc)).hexdigest()


def head_mac(master: bytes, head: dict[str, Any]) -> str:
    """The HMAC a head must carry, under the chain key derived from the master key (SECRET_KEY)."""
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"meadhall-v1", info=b"audit-chain").derive(master)
    doc = {"chain": head["chain_key"], "last_id": str(head["last_id"]), "last_hash": head["last_hash"],
           "keyed_after": _sid(head["keyed_after"])}
    return hmac.new(key, _canonical(doc), hashlib.sha256).hexdigest()


def chain_key(guild_id: int | None) -> str:
    return "instance" if guild_id is None else f"guild:{guild_id}"


async def entries(engine: Any, guild_id: int | None) -> list[dict[str, Any]]:
    cond = audit_log.c.guild_id.is_(None) if guild_id is None else audit_log.c.guild_id == guild_id
    async with engine.connect() as conn:
        rows = await conn.execute(select(audit_log).where(cond).order_by(audit_log.c.id))
        return [dict(r) for r in rows.mappings()]


async def heads(engine: Any) -> dict[str, dict[str, Any]]:
    async with engine.connect() as conn:
        return {r["chain_key"]: dict(r) for r in (await conn.execute(select(audit_chain_heads))).mappings()}


async def older_chain(engine: Any, guild_id: int | None, count: int, first_id: int) -> list[dict[str, Any]]:
    """A chain as the service wrote it before the keyed chain (and as migration 0027 leaves it): plain
    SHA-256 entries, a head without marker or HMAC."""
    rows: list[dict[str, Any]] = []
    prev = None
    for i in range(count):
        row = {"id": first_id + i, "action": "guild.update", "guild_id": guild_id, "actor_id": 7,
               "target_type": "guild", "target_id": guild_id, "reason": "é" if i == 1 else None,
               "data": {"n": i}, "created_at": datetime(2025, 1, 1, 10, 0, i, 1000 * i, tzinfo=UTC),
               "prev_hash": prev}
        row["hash"] = prev = plain_hash(row)
        rows.append(row)
    async with engine.begin() as conn:
        await conn.execute(insert(audit_log).values(rows))
        await conn.execute(insert(audit_chain_heads).values(chain_key=chain_key(guild_id), last_id=rows[-1]["id"],
                                                            last_hash=prev))
    return rows


async def strip_and_rewrite(engine: Any, guild_id: int | None, *, strip: bool = True, **edit: Any
                            ) -> list[dict[str, Any]]:
    """What someone who can write to the database (and does not hold SECRET_KEY) can do: edit the chain's
    first entry, rewrite every entry with plain SHA-256 linked to the previous one, point the head at the
    new last hash, and (`strip`) remove its marker and HMAC. Returns the rewritten entries."""
    rows = await entries(engine, guild_id)
    rows[0].update(edit)
    prev = None
    async with engine.begin() as conn:
        for i, row in enumerate(rows):
            row["prev_hash"] = prev
            row["hash"] = prev = plain_hash(row)
            changes = {**(edit if i == 0 else {}), "prev_hash": row["prev_hash"], "hash": row["hash"]}
            await conn.execute(update(audit_log).where(audit_log.c.id == row["id"]).values(**changes))
        await conn.execute(update(audit_chain_heads).where(audit_chain_heads.c.chain_key == chain_key(guild_id))
                           .values(last_hash=prev, **({"keyed_after": None, "mac": None} if strip else {})))
    return rows


async def start_process(settings: Any, clock: Any = None) -> None:
    """A process starting on the instance's database and stopping: a node, or any CLI command (migrations,
    then what every start does)."""
    node = Runtime(settings, clock=clock, outbox=True)
    try:
        await node.start()
    finally:
        await node.close()

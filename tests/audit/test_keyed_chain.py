"""The keyed audit chain (docs/audit.md, "Keyed hashes"): entries carry HMAC-SHA256 under a key derived from
SECRET_KEY, so rewriting an entry and recomputing every later hash with plain SHA-256 (all that the database
alone allows) is caught; chains written before stay verifiable in their plain form up to the marker that the
first start after the upgrade gives their head, which the head's own HMAC keeps from being moved; a different
SECRET_KEY does not verify."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy import delete, insert, select, update

from meadhall.audit.chain import verify_chains
from meadhall.audit.record import record
from meadhall.core.crypto import Keys
from meadhall.db import dialect
from meadhall.db.schema.audit import audit_chain_heads, audit_log
from tests.support.audit_chain import start_process

GUILD = 111


def canonical(row: dict[str, Any]) -> bytes:
    """The canonical bytes of docs/audit.md, written out independently of the code under test."""
    created = row["created_at"]
    created = created.replace(tzinfo=UTC) if created.tzinfo is None else created.astimezone(UTC)

    def s(v: Any) -> str | None:
        return None if v is None else str(v)

    doc = {"prev_hash": row["prev_hash"], "id": str(row["id"]), "action": row["action"],
           "guild_id": s(row["guild_id"]), "actor_id": s(row["actor_id"]), "target_type": row["target_type"],
           "target_id": s(row["target_id"]), "reason": row["reason"], "data": row["data"],
           "created_at": created.strftime("%Y-%m-%dT%H:%M:%S.") + f"{created.microsecond // 1000:03d}Z"}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def plain(row: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(row)).hexdigest()


def keyed(row: dict[str, Any], master: bytes) -> str:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"meadhall-v1", info=b"audit-chain").derive(master)
    return hmac.new(key, canonical(row), hashlib.sha256).hexdigest()


async def write(rt: Any, guild_id: int | None = GUILD, **kw: Any) -> int:
    async with rt.uow() as uow:
        return int(await record(uow, "guild.update", actor_id=5, guild_id=guild_id, **kw))


async def verify(rt: Any, secret: bytes | None = None) -> dict[str, Any]:
    async with dialect.snapshot_read(rt.engine) as conn:
        return (await verify_chains(conn, secret or rt.keys.audit_chain)).result()


async def chain(rt: Any, guild_id: int | None = GUILD) -> list[dict[str, Any]]:
    cond = audit_log.c.guild_id.is_(None) if guild_id is None else audit_log.c.guild_id == guild_id
    async with rt.engine.connect() as conn:
        return [dict(r) for r in (await conn.execute(select(audit_log).where(cond).order_by(audit_log.c.id))).mappings()]


async def head(rt: Any, key: str = f"guild:{GUILD}") -> dict[str, Any]:
    async with rt.engine.connect() as conn:
        return dict((await conn.execute(select(audit_chain_heads).where(audit_chain_heads.c.chain_key == key)))
                    .mappings().one())


async def sql(rt: Any, *stmts: Any) -> None:
    async with rt.engine.begin() as conn:
        for stmt in stmts:
            await conn.execute(stmt)


async def rewrite_plain(rt: Any, rows: list[dict[str, Any]], start: int, **head_values: Any) -> None:
    """What someone with write access to the database (and not SECRET_KEY) can do: rewrite the entries from
    `start` on with plain SHA-256, each linked to the previous, and point the head at the new last hash."""
    prev = rows[start - 1]["hash"] if start else None
    stmts = []
    for row in rows[start:]:
        row["prev_hash"] = prev
        row["hash"] = prev = plain(row)
        stmts.append(update(audit_log).where(audit_log.c.id == row["id"])
                     .values(reason=row["reason"], prev_hash=row["prev_hash"], hash=row["hash"]))
    stmts.append(update(audit_chain_heads).where(audit_chain_heads.c.chain_key == f"guild:{GUILD}")
                 .values(last_hash=prev, **head_values))
    await sql(rt, *stmts)


async def test_new_entries_are_keyed_with_a_key_from_secret_key(rt):
    for i in range(3):
        await write(rt, reason=f"r{i}")
    rows = await chain(rt)
    prev = None
    for row in rows:
        assert row["prev_hash"] == prev and row["hash"] == keyed(row, rt.secret) != plain(row)
        prev = row["hash"]
    h = await head(rt)
    assert h["keyed_after"] == 0 and h["mac"] is not None and h["last_hash"] == rows[-1]["hash"]
    assert await verify(rt) == {"status": "ok", "chains": 1, "entries": 3}


async def test_a_rewritten_entry_with_a_recomputed_plain_chain_is_caught(rt):
    ids = [await write(rt, reason=f"r{i}") for i in range(4)]
    rows = await chain(rt)
    rows[1]["reason"] = "nothing happened"
    await rewrite_plain(rt, rows, 1)
    assert await verify(rt) == {"status": "tampered", "findings": [
        {"chain": f"guild:{GUILD}", "entry_id": str(ids[1]), "problem": "changed"}]}


async def test_moving_the_marker_over_a_recomputed_chain_is_caught_by_the_head(rt):
    """The whole chain rewritten in plain form and the head's marker moved past it: every entry now checks
    as an old plain one, but the head's HMAC no longer matches what it states."""
    ids = [await write(rt, reason=f"r{i}") for i in range(3)]
    rows = await chain(rt)
    rows[0]["reason"] = "nothing happened"
    await rewrite_plain(rt, rows, 0, keyed_after=ids[-1])
    assert await verify(rt) == {"status": "tampered", "findings": [
        {"chain": f"guild:{GUILD}", "entry_id": str(ids[-1]), "problem": "head_changed"}]}


async def test_a_head_moved_back_over_removed_entries_is_caught(rt):
    ids = [await write(rt) for _ in range(4)]
    rows = await chain(rt)
    await sql(rt, delete(audit_log).where(audit_log.c.id.in_(ids[2:])),
              update(audit_chain_heads).where(audit_chain_heads.c.chain_key == f"guild:{GUILD}")
              .values(last_id=ids[1], last_hash=rows[1]["hash"]))
    assert await verify(rt) == {"status": "tampered", "findings": [
        {"chain": f"guild:{GUILD}", "entry_id": str(ids[1]), "problem": "head_changed"}]}


async def older_plain_chain(rt: Any, count: int) -> list[dict[str, Any]]:
    """A chain as the service wrote it before the keyed chain: plain SHA-256, a head without marker or HMAC
    (until the first start after the upgrade marks it: tests/audit/test_unmarked_heads.py)."""
    rows, prev = [], None
    for i in range(count):
        row = {"id": 1000 + i, "action": "guild.update", "guild_id": GUILD, "actor_id": i, "target_type": "guild",
               "target_id": None, "reason": "ré" if i == 1 else None, "data": {"n": i},
               "created_at": datetime(2025, 1, 1, 10, 0, i, 1000 * i, tzinfo=UTC), "prev_hash": prev}
        row["hash"] = prev = plain(row)
        rows.append(row)
    await sql(rt, insert(audit_log).values(rows),
              insert(audit_chain_heads).values(chain_key=f"guild:{GUILD}", last_id=rows[-1]["id"], last_hash=prev))
    return rows


async def test_an_older_chain_keyed_at_start_still_verifies_and_continues_keyed(rt, settings, clock):
    old = await older_plain_chain(rt, 3)
    await start_process(settings, clock)  # the first start after the upgrade marks and signs its head
    assert (await head(rt))["keyed_after"] == old[-1]["id"]
    assert await verify(rt) == {"status": "ok", "chains": 1, "entries": 3}
    new = [await write(rt) for _ in range(2)]
    rows = await chain(rt)
    assert [r["id"] for r in rows] == [r["id"] for r in old] + new
    assert rows[3]["prev_hash"] == old[-1]["hash"]
    assert [r["hash"] == keyed(r, rt.secret) for r in rows] == [False, False, False, True, True]
    assert (await head(rt))["keyed_after"] == old[-1]["id"]
    assert await verify(rt) == {"status": "ok", "chains": 1, "entries": 5}


async def test_keyed_entries_after_the_marker_cannot_be_turned_plain(rt, settings, clock):
    await older_plain_chain(rt, 2)
    await start_process(settings, clock)
    new = [await write(rt, reason=f"n{i}") for i in range(2)]
    rows = await chain(rt)
    rows[2]["reason"] = "nothing happened"
    await rewrite_plain(rt, rows, 2)
    assert (await verify(rt))["findings"] == [{"chain": f"guild:{GUILD}", "entry_id": str(new[0]),
                                               "problem": "changed"}]


async def test_an_edited_older_entry_is_still_caught(rt, settings, clock):
    old = await older_plain_chain(rt, 3)
    await start_process(settings, clock)
    await write(rt)
    await sql(rt, update(audit_log).where(audit_log.c.id == old[1]["id"]).values(reason="rewritten"))
    assert (await verify(rt))["findings"] == [{"chain": f"guild:{GUILD}", "entry_id": str(old[1]["id"]),
                                               "problem": "changed"}]


async def test_a_chain_verified_with_the_wrong_secret_key_fails(rt):
    first = await write(rt)
    instance_first = await write(rt, guild_id=None)
    await write(rt)
    wrong = Keys.derive(b"another secret key, long enough to be one").audit_chain
    assert await verify(rt, wrong) == {"status": "tampered", "findings": [
        {"chain": f"guild:{GUILD}", "entry_id": str(first), "problem": "changed"},
        {"chain": "instance", "entry_id": str(instance_first), "problem": "changed"}]}
    assert (await verify(rt))["status"] == "ok"

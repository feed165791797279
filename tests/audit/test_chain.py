"""The tamper-evident audit chain (docs/audit.md): every entry links to its predecessor in its own chain
(one per guild, one for the instance), a head row names the last one, verification finds an edited entry,
an entry removed in the middle and one removed at the end, concurrent writers (also on two nodes) keep one
linear chain, and migration 0017 links the entries that existed before it. (The keyed part of the rule and
its boundary with older plain chains: test_keyed_chain.py.)"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from alembic import command
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy import delete, select, update

from meadhall.audit.chain import verify_chains
from meadhall.audit.record import record
from meadhall.config import Settings
from meadhall.db import dialect
from meadhall.db.engine import create_engine
from meadhall.db.migrate import alembic_config, migrate
from meadhall.db.schema.audit import audit_chain_heads, audit_log
from meadhall.runtime import Runtime
from tests.support.isolation import TEST_DATABASE_URL, async_url, fresh_postgres

GUILD_A, GUILD_B = 111, 222


async def write(rt: Any, action: str = "guild.update", *, guild_id: int | None = GUILD_A, **kw: Any) -> int:
    async with rt.uow() as uow:
        return int(await record(uow, action, actor_id=kw.pop("actor_id", 5), guild_id=guild_id, **kw))


async def verify(rt: Any) -> dict[str, Any]:
    async with dialect.snapshot_read(rt.engine) as conn:
        return (await verify_chains(conn, rt.keys.audit_chain)).result()


async def chain(rt: Any, guild_id: int | None) -> list[dict[str, Any]]:
    cond = audit_log.c.guild_id.is_(None) if guild_id is None else audit_log.c.guild_id == guild_id
    async with rt.engine.connect() as conn:
        rows = await conn.execute(select(audit_log).where(cond).order_by(audit_log.c.id))
        return [dict(r) for r in rows.mappings()]


async def heads(rt: Any) -> dict[str, tuple[int, str]]:
    async with rt.engine.connect() as conn:
        return {r.chain_key: (r.last_id, r.last_hash) for r in await conn.execute(select(audit_chain_heads))}


async def sql(rt: Any, stmt: Any) -> None:
    async with rt.engine.begin() as conn:
        await conn.execute(stmt)


def chain_key_of(secret: bytes) -> bytes:
    """The chain's key as docs/audit.md derives it from the master key, written out independently."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"meadhall-v1", info=b"audit-chain").derive(secret)


def expected_hash(row: dict[str, Any], secret: bytes | None = None) -> str:
    """The rule of docs/audit.md written out independently of the code under test: HMAC-SHA256 under the
    chain's key derived from `secret` (the master key), or plain SHA-256 for entries older than the keyed
    chain (`secret` None)."""
    created = row["created_at"]
    created = created.replace(tzinfo=UTC) if created.tzinfo is None else created.astimezone(UTC)
    doc = {"prev_hash": row["prev_hash"], "id": str(row["id"]), "action": row["action"],
           "guild_id": None if row["guild_id"] is None else str(row["guild_id"]),
           "actor_id": None if row["actor_id"] is None else str(row["actor_id"]),
           "target_type": row["target_type"],
           "target_id": None if row["target_id"] is None else str(row["target_id"]),
           "reason": row["reason"], "data": row["data"],
           "created_at": created.strftime("%Y-%m-%dT%H:%M:%S.") + f"{created.microsecond // 1000:03d}Z"}
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    if secret is None:
        return hashlib.sha256(raw).hexdigest()
    return hmac.new(chain_key_of(secret), raw, hashlib.sha256).hexdigest()


async def test_entries_link_per_chain_and_the_heads_name_the_last(rt, clock):
    clock.set(datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC))
    a1 = await write(rt, reason="Ünïcode, \"quotes\"", data={"changes": {"name": ["a", "b"]}, "n": 2**60})
    i1 = await write(rt, "instance.user_ban", guild_id=None, target_type="user", target_id=9, reason="spam")
    b1 = await write(rt, guild_id=GUILD_B, data={"k": (1, 2), 3: "int key"})
    a2 = await write(rt, actor_id=None)
    i2 = await write(rt, "instance.settings_update", guild_id=None, actor_id=None)
    for guild_id, ids in ((GUILD_A, [a1, a2]), (None, [i1, i2]), (GUILD_B, [b1])):
        rows = await chain(rt, guild_id)
        assert [r["id"] for r in rows] == ids
        prev = None
        for row in rows:
            assert row["prev_hash"] == prev and row["hash"] == expected_hash(row, rt.secret)
            prev = row["hash"]
    assert await heads(rt) == {
        f"guild:{GUILD_A}": (a2, (await chain(rt, GUILD_A))[-1]["hash"]),
        f"guild:{GUILD_B}": (b1, (await chain(rt, GUILD_B))[-1]["hash"]),
        "instance": (i2, (await chain(rt, None))[-1]["hash"]),
    }
    assert await verify(rt) == {"status": "ok", "chains": 3, "entries": 5}


async def test_an_empty_store_verifies(rt):
    assert await verify(rt) == {"status": "ok", "chains": 0, "entries": 0}


async def test_an_edited_entry_is_named_changed(rt):
    ids = [await write(rt, reason=f"r{i}") for i in range(4)]
    other = await write(rt, guild_id=GUILD_B)
    await sql(rt, update(audit_log).where(audit_log.c.id == ids[1]).values(reason="rewritten"))
    await sql(rt, update(audit_log).where(audit_log.c.id == ids[3]).values(data={"x": 1}))
    assert await verify(rt) == {"status": "tampered", "findings": [
        {"chain": f"guild:{GUILD_A}", "entry_id": str(ids[1]), "problem": "changed"}]}  # the first bad one
    await sql(rt, update(audit_log).where(audit_log.c.id == other).values(created_at=datetime(2020, 1, 1, tzinfo=UTC)))
    assert [f["chain"] for f in (await verify(rt))["findings"]] == [f"guild:{GUILD_A}", f"guild:{GUILD_B}"]


@pytest.mark.parametrize("column", ["action", "actor_id", "target_id", "prev_hash", "hash"])
async def test_any_field_edited_is_caught(rt, column):
    ids = [await write(rt, target_type="user", target_id=7) for _ in range(2)]
    value = {"action": "guild.delete", "actor_id": 6, "target_id": 8, "prev_hash": "0" * 64, "hash": "f" * 64}[column]
    await sql(rt, update(audit_log).where(audit_log.c.id == ids[0]).values(**{column: value}))
    [finding] = (await verify(rt))["findings"]
    assert finding == {"chain": f"guild:{GUILD_A}", "entry_id": str(ids[0]), "problem": "changed"}


async def test_removed_entries_are_named(rt):
    ids = [await write(rt, guild_id=None, actor_id=None) for _ in range(4)]
    await sql(rt, delete(audit_log).where(audit_log.c.id == ids[1]))
    # The entry after the gap names it: its link points at an entry that is no longer stored.
    assert await verify(rt) == {"status": "tampered", "findings": [
        {"chain": "instance", "entry_id": str(ids[2]), "problem": "removed_before"}]}


async def test_the_first_entry_removed_is_found(rt):
    ids = [await write(rt) for _ in range(3)]
    await sql(rt, delete(audit_log).where(audit_log.c.id == ids[0]))
    assert (await verify(rt))["findings"] == [
        {"chain": f"guild:{GUILD_A}", "entry_id": str(ids[1]), "problem": "removed_before"}]


async def test_the_last_entry_removed_is_found_by_the_head(rt):
    ids = [await write(rt) for _ in range(3)]
    await write(rt, guild_id=GUILD_B)
    await sql(rt, delete(audit_log).where(audit_log.c.id == ids[2]))
    assert await verify(rt) == {"status": "tampered", "findings": [
        {"chain": f"guild:{GUILD_A}", "entry_id": str(ids[2]), "problem": "removed_at_end"}]}
    await sql(rt, delete(audit_log).where(audit_log.c.guild_id == GUILD_A))  # the whole chain
    assert (await verify(rt))["findings"] == [
        {"chain": f"guild:{GUILD_A}", "entry_id": str(ids[2]), "problem": "removed_at_end"}]


async def test_a_chain_written_around_the_head_is_reported(rt):
    first = await write(rt)
    await sql(rt, delete(audit_chain_heads))
    assert (await verify(rt))["findings"] == [
        {"chain": f"guild:{GUILD_A}", "entry_id": str(first), "problem": "head_missing"}]


async def test_a_rolled_back_write_leaves_the_chain_as_it_was(rt):
    first = await write(rt)
    with pytest.raises(RuntimeError):
        async with rt.uow() as uow:
            await record(uow, "guild.update", actor_id=1, guild_id=GUILD_A)
            raise RuntimeError("the action failed")
    second = await write(rt)
    rows = await chain(rt, GUILD_A)
    assert [r["id"] for r in rows] == [first, second] and rows[1]["prev_hash"] == rows[0]["hash"]
    assert (await verify(rt))["status"] == "ok"


async def test_a_second_writer_of_a_chain_waits_for_the_first(rt):
    """Two transactions writing one chain: the second links to the first's entry, not to the same
    predecessor (PostgreSQL: the head's row lock; SQLite: one writer at a time)."""
    base = await write(rt)
    first_wrote, release = asyncio.Event(), asyncio.Event()

    async def slow() -> int:
        async with rt.uow() as uow:
            entry = await record(uow, "guild.update", actor_id=1, guild_id=GUILD_A)
            first_wrote.set()
            await release.wait()
        return int(entry)

    task_a = asyncio.create_task(slow())
    await first_wrote.wait()
    task_b = asyncio.create_task(write(rt, actor_id=2))
    await asyncio.sleep(0.3)
    assert not task_b.done()  # held at the head
    release.set()
    a, b = await asyncio.gather(task_a, task_b)
    rows = await chain(rt, GUILD_A)
    assert [r["id"] for r in rows] == [base, a, b]
    assert rows[2]["prev_hash"] == rows[1]["hash"] and rows[1]["prev_hash"] == rows[0]["hash"]
    assert (await verify(rt))["status"] == "ok"


async def test_many_concurrent_writers_on_two_nodes_keep_one_linear_chain(rt, settings, clock, backend):
    """Two service processes (node ids 1 and 0: the second node's ids made in the same millisecond sort
    lower) write the instance chain and one guild chain at once; every chain stays one line in id order."""
    other = Runtime(settings.model_copy(update={"NODE_ID": 1}), clock=clock)
    await other.start(run_migrations=False)
    try:
        writers = [write(node, guild_id=g, actor_id=i) for i in range(15) for node in (rt, other)
                   for g in (None, GUILD_A)]
        ids = await asyncio.gather(*writers)
    finally:
        await other.close()
    assert len(set(ids)) == 60
    for guild_id in (None, GUILD_A):
        rows = await chain(rt, guild_id)
        assert len(rows) == 30
        assert [r["prev_hash"] for r in rows] == [None, *(r["hash"] for r in rows[:-1])]
    assert await verify(rt) == {"status": "ok", "chains": 2, "entries": 60}


# ---- migration 0017 ---------------------------------------------------------------------------------------


@pytest.fixture(params=["sqlite"] + (["postgres"] if TEST_DATABASE_URL else []))
def fresh_url(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}"
        return
    with fresh_postgres() as url:
        yield async_url(url)


async def test_migration_links_the_entries_that_existed_before_it(fresh_url, tmp_path, clock):
    engine = create_engine(fresh_url)
    try:
        async with engine.connect() as conn:
            await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "0016_passkeys"))
            await conn.commit()
        old = [
            {"id": 1000 + i, "action": "guild.update", "guild_id": None if i % 3 == 0 else GUILD_A + i % 2,
             "actor_id": i, "target_type": "guild", "target_id": None, "reason": "r,\"x\"" if i == 4 else None,
             "data": {"changes": {"name": ["é", str(i)]}} if i % 2 else {},
             "created_at": datetime(2025, 1, 1, 10, 0, i, 1000 * i + 7, tzinfo=UTC)} for i in range(10)
        ]
        async with engine.begin() as conn:
            await conn.execute(
                audit_log.insert().values([{k: v for k, v in row.items()} for row in old]).execution_options())
        await migrate(engine)
    finally:
        await engine.dispose()
    db_url = fresh_url.replace("+aiosqlite", "").replace("+asyncpg", "")
    node = Runtime(Settings(DATABASE_URL=db_url, DATA_DIR=tmp_path / "data", SECRET_KEY="x" * 32), clock=clock)
    await node.start(run_migrations=False)
    try:
        assert await verify(node) == {"status": "ok", "chains": 3, "entries": 10}
        later = await write(node)  # new entries continue the backfilled chain
        rows = await chain(node, GUILD_A)
        assert rows[-1]["id"] == later and rows[-1]["prev_hash"] == rows[-2]["hash"]
        # The backfilled entries keep their plain hashes; the chain is keyed from the first new one on.
        assert all(r["hash"] == expected_hash(r) for r in rows[:-1])
        assert rows[-1]["hash"] == expected_hash(rows[-1], node.secret)
        assert (await verify(node))["status"] == "ok"
    finally:
        await node.close()

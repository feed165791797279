"""`meadhall audit-verify [--data-dir]` (docs/audit.md) against the test database: one JSON object on stdout,
exit 0 when every chain is intact; exit 1 with the first bad entry of each chain when an entry was
edited, removed in the middle, or removed at the end. The walk itself is tested in tests/audit/test_chain.py."""

from __future__ import annotations

from sqlalchemy import delete, func, select, update

from meadhall.db.schema import audit_log
from tests.support.guilds import make_guild, room
from tests.support.http import Api


async def test_an_untouched_log_verifies(client, accounts, rt, settings, cli):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    await room(client, a, g["id"], name="one")
    await make_guild(client, a, "Other")
    async with rt.engine.connect() as conn:
        entries = (await conn.execute(select(func.count()).select_from(audit_log))).scalar_one()
    result = await cli("audit-verify", "--data-dir", str(settings.DATA_DIR))
    assert result.exit_code == 0, result.stderr
    assert result.json == {"status": "ok", "chains": 2, "entries": entries} and entries == 3
    assert result.stderr == ""


async def test_tampering_is_reported_with_exit_1(client, accounts, rt, cli):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    rooms = [await room(client, a, g["id"], name=f"r{i}") for i in range(4)]
    other = await make_guild(client, a, "Other")
    for i in range(2):
        await Api(client).patch(f"/guilds/{other['id']}", a, json={"name": f"Other {i}"})
    async with rt.engine.connect() as conn:
        first = [r.id for r in await conn.execute(select(audit_log.c.id).where(audit_log.c.guild_id == int(g["id"]))
                                                  .order_by(audit_log.c.id))]
        second = [r.id for r in await conn.execute(select(audit_log.c.id)
                                                   .where(audit_log.c.guild_id == int(other["id"]))
                                                   .order_by(audit_log.c.id))]
    assert len(first) == 1 + len(rooms) and len(second) == 3
    async with rt.engine.begin() as conn:
        await conn.execute(update(audit_log).where(audit_log.c.id == first[2]).values(reason="nothing happened"))
        await conn.execute(delete(audit_log).where(audit_log.c.id == first[4]))  # a later one: not the first bad
        await conn.execute(delete(audit_log).where(audit_log.c.id == second[-1]))
    result = await cli("audit-verify")
    assert result.exit_code == 1
    assert result.json == {"status": "tampered", "findings": [
        {"chain": f"guild:{g['id']}", "entry_id": str(first[2]), "problem": "changed"},
        {"chain": f"guild:{other['id']}", "entry_id": str(second[-1]), "problem": "removed_at_end"},
    ]}
    async with rt.engine.begin() as conn:
        await conn.execute(delete(audit_log).where(audit_log.c.id == second[1]))
    result = await cli("audit-verify")
    assert result.exit_code == 1
    assert result.json["findings"][1] == {"chain": f"guild:{other['id']}", "entry_id": str(second[-1]),
                                          "problem": "removed_at_end"}


async def test_an_entry_removed_in_the_middle_names_its_successor(client, accounts, rt, cli):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    for i in range(3):
        await room(client, a, g["id"], name=f"r{i}")
    async with rt.engine.begin() as conn:
        ids = [r.id for r in await conn.execute(select(audit_log.c.id).order_by(audit_log.c.id))]
        await conn.execute(delete(audit_log).where(audit_log.c.id == ids[1]))
    result = await cli("audit-verify")
    assert result.exit_code == 1
    assert result.json == {"status": "tampered", "findings": [
        {"chain": f"guild:{g['id']}", "entry_id": str(ids[2]), "problem": "removed_before"}]}


async def test_usage_errors_exit_2(cli):
    assert (await cli("audit-verify", "--bogus")).exit_code == 2

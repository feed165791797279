"""`meadhall audit-verify` checks the keyed audit chain (docs/audit.md, "Keyed hashes") with the SECRET_KEY it
is given: the instance's key verifies, another key finds the first keyed entry of each chain `changed`."""

from __future__ import annotations

from sqlalchemy import select

from meadhall.db.schema import audit_log
from tests.support.guilds import make_guild, room


async def test_audit_verify_needs_the_instances_secret_key(client, accounts, rt, cli):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    await room(client, a, g["id"], name="one")
    async with rt.engine.connect() as conn:
        first = (await conn.execute(select(audit_log.c.id).order_by(audit_log.c.id).limit(1))).scalar_one()
    ok = await cli("audit-verify")
    assert ok.exit_code == 0 and ok.json == {"status": "ok", "chains": 1, "entries": 2}
    wrong = await cli("audit-verify", env={"SECRET_KEY": "another-secret-key-" + "x" * 32})
    assert wrong.exit_code == 1
    assert wrong.json == {"status": "tampered", "findings": [
        {"chain": f"guild:{g['id']}", "entry_id": str(first), "problem": "changed"}]}

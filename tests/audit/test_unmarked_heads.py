"""Every chain head carries its marker and HMAC from the first start after the upgrade on (docs/audit.md,
"Keyed hashes"): a start keys the heads of chains written before the keyed chain (their entries keep their
plain hashes and verify), once, cheaply, also when two processes start at once; after that a head without
marker and HMAC is reported (`head_changed`) and no later start or write marks it again, so stripping them
over a chain rewritten in plain SHA-256 no longer gives a chain that verifies."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import event

from meadhall.audit.chain import verify_chains
from meadhall.audit.record import record
from meadhall.db import dialect
from meadhall.runtime import Runtime
from tests.support.audit_chain import entries, head_mac, heads, older_chain, start_process, strip_and_rewrite

GUILD = 111


async def verify(rt: Any) -> dict[str, Any]:
    async with dialect.snapshot_read(rt.engine) as conn:
        return (await verify_chains(conn, rt.keys.audit_chain)).result()


async def write(rt: Any, guild_id: int | None = GUILD) -> int:
    async with rt.uow() as uow:
        return int(await record(uow, "guild.update", actor_id=5, guild_id=guild_id))


async def upgraded(rt: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """An instance as the upgrade leaves it: a guild chain and the instance chain in plain SHA-256, their
    heads without marker or HMAC."""
    return await older_chain(rt.engine, GUILD, 3, 1000), await older_chain(rt.engine, None, 2, 2000)


async def test_the_first_start_keys_the_heads_of_older_chains_which_still_verify(rt, settings, clock):
    guild, instance = await upgraded(rt)
    await start_process(settings, clock)
    after = await heads(rt.engine)
    assert {k: (h["last_id"], h["keyed_after"]) for k, h in after.items()} == {
        f"guild:{GUILD}": (guild[-1]["id"], guild[-1]["id"]), "instance": (instance[-1]["id"], instance[-1]["id"])}
    assert all(h["mac"] == head_mac(rt.secret, h) for h in after.values())
    assert await verify(rt) == {"status": "ok", "chains": 2, "entries": 5}
    # The chain goes on keyed after its marker; its older entries keep their plain hashes.
    new = await write(rt)
    assert (await heads(rt.engine))[f"guild:{GUILD}"]["keyed_after"] == guild[-1]["id"]
    assert [r["hash"] for r in (await entries(rt.engine, GUILD))[:3]] == [r["hash"] for r in guild]
    assert await verify(rt) == {"status": "ok", "chains": 2, "entries": 6} and new > guild[-1]["id"]


async def test_a_stripped_head_over_a_plain_rewritten_chain_is_reported_and_never_marked_again(rt, settings, clock):
    await upgraded(rt)
    await start_process(settings, clock)
    await write(rt)  # a keyed entry after the marker, which the rewrite turns plain
    rewritten = await strip_and_rewrite(rt.engine, GUILD, reason="nothing happened")
    finding = {"chain": f"guild:{GUILD}", "entry_id": str(rewritten[-1]["id"]), "problem": "head_changed"}
    assert await verify(rt) == {"status": "tampered", "findings": [finding]}
    # A later start does not key it again (another head carries an HMAC), nor does a write mark it.
    await start_process(settings, clock)
    assert await verify(rt) == {"status": "tampered", "findings": [finding]}
    later = await write(rt)
    head = (await heads(rt.engine))[f"guild:{GUILD}"]
    assert (head["last_id"], head["keyed_after"], head["mac"]) == (later, None, None)
    assert await verify(rt) == {"status": "tampered", "findings": [{**finding, "entry_id": str(later)}]}


async def test_stripping_a_chain_begun_since_the_upgrade_is_reported(rt, settings, clock):
    ids = [await write(rt) for _ in range(3)]
    await write(rt, guild_id=None)
    await strip_and_rewrite(rt.engine, GUILD, reason="nothing happened")
    await start_process(settings, clock)
    assert await verify(rt) == {"status": "tampered", "findings": [
        {"chain": f"guild:{GUILD}", "entry_id": str(ids[-1]), "problem": "head_changed"}]}


async def test_a_second_start_changes_nothing(rt, settings, clock):
    await upgraded(rt)
    await start_process(settings, clock)
    first = (await heads(rt.engine), await entries(rt.engine, GUILD), await entries(rt.engine, None))
    assert all(h["keyed_after"] == h["last_id"] and h["mac"] for h in first[0].values())
    await start_process(settings, clock)
    assert (await heads(rt.engine), await entries(rt.engine, GUILD), await entries(rt.engine, None)) == first
    assert await verify(rt) == {"status": "ok", "chains": 2, "entries": 5}


async def test_two_processes_starting_at_once_key_each_head_once(rt, settings, clock):
    guild, instance = await upgraded(rt)
    await asyncio.gather(start_process(settings, clock), start_process(settings, clock))
    after = await heads(rt.engine)
    assert {k: h["keyed_after"] for k, h in after.items()} == {f"guild:{GUILD}": guild[-1]["id"],
                                                               "instance": instance[-1]["id"]}
    assert all(h["mac"] == head_mac(rt.secret, h) for h in after.values())
    assert await verify(rt) == {"status": "ok", "chains": 2, "entries": 5}


async def test_a_start_with_nothing_to_key_asks_the_heads_one_question(rt, settings, clock):
    await upgraded(rt)
    await start_process(settings, clock)
    await write(rt)
    asked: list[str] = []
    node = Runtime(settings, clock=clock, outbox=True)

    @event.listens_for(node.engine.sync_engine, "before_cursor_execute")
    def _seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "audit_chain_heads" in statement:
            asked.append(statement)

    try:
        await node.start(run_migrations=False)
    finally:
        await node.close()
    assert len(asked) == 1 and asked[0].lstrip().upper().startswith("SELECT"), asked


async def test_the_plain_part_of_a_keyed_older_chain_cannot_be_recomputed(rt, settings, clock):
    await upgraded(rt)
    await start_process(settings, clock)
    rewritten = await strip_and_rewrite(rt.engine, GUILD, strip=False, reason="nothing happened")
    assert await verify(rt) == {"status": "tampered", "findings": [
        {"chain": f"guild:{GUILD}", "entry_id": str(rewritten[-1]["id"]), "problem": "head_changed"}]}


async def test_a_whole_chain_inserted_with_plain_hashes_after_the_upgrade_is_reported(rt, settings, clock):
    await write(rt, guild_id=None)
    forged = await older_chain(rt.engine, GUILD, 2, 1000)
    await start_process(settings, clock)
    assert (await heads(rt.engine))[f"guild:{GUILD}"]["mac"] is None
    assert await verify(rt) == {"status": "tampered", "findings": [
        {"chain": f"guild:{GUILD}", "entry_id": str(forged[-1]["id"]), "problem": "head_changed"}]}

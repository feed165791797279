"""`meadhall audit-verify` and heads without marker and HMAC (docs/audit.md, "Keyed hashes"): the command's own
start keys the heads of chains written before the keyed chain, which then verify; a head stripped of its
marker and HMAC over a chain rewritten in plain SHA-256 is reported `head_changed`, and the command's start
(or any later one) does not key it again."""

from __future__ import annotations

import json
from typing import Any

from tests.support.audit_chain import entries, head_mac, heads, older_chain, strip_and_rewrite
from tests.support.guilds import make_guild, room


def answer(result: Any) -> Any:
    """The command's one JSON answer. Its start logs the keying (info) or the heads it leaves unkeyed
    (warning): `meadhall` sends logs to stderr (main()), the test runner leaves logging unconfigured, so
    here those lines come before the answer on stdout."""
    return json.loads(result.stdout.splitlines()[-1])


async def test_a_stripped_head_over_a_plain_rewritten_chain_fails_verification(client, accounts, rt, cli):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    for i in range(2):
        await room(client, a, g["id"], name=f"r{i}")
    await make_guild(client, a, "Other")
    assert (await cli("audit-verify")).exit_code == 0
    rewritten = await strip_and_rewrite(rt.engine, int(g["id"]), reason="nothing happened")
    finding = {"chain": f"guild:{g['id']}", "entry_id": str(rewritten[-1]["id"]), "problem": "head_changed"}
    for _ in range(2):  # each run starts a runtime first: it leaves the stripped head as it is
        result = await cli("audit-verify")
        assert result.exit_code == 1
        assert answer(result) == {"status": "tampered", "findings": [finding]}
    # Nor does the next audit entry of that chain mark it again.
    await room(client, a, g["id"], name="later")
    later = (await entries(rt.engine, int(g["id"])))[-1]["id"]
    result = await cli("audit-verify")
    assert result.exit_code == 1
    assert answer(result) == {"status": "tampered", "findings": [{**finding, "entry_id": str(later)}]}


async def test_an_older_plain_chain_is_keyed_by_the_first_start_and_stripping_it_is_then_caught(rt, cli):
    guild = await older_chain(rt.engine, 111, 3, 1000)
    instance = await older_chain(rt.engine, None, 2, 2000)
    result = await cli("audit-verify")
    assert result.exit_code == 0 and answer(result) == {"status": "ok", "chains": 2, "entries": 5}
    keyed = await heads(rt.engine)
    assert keyed["guild:111"]["keyed_after"] == guild[-1]["id"]
    assert keyed["instance"]["keyed_after"] == instance[-1]["id"]
    assert all(h["mac"] == head_mac(rt.secret, h) for h in keyed.values())
    await strip_and_rewrite(rt.engine, 111, reason="nothing happened")
    result = await cli("audit-verify")
    assert result.exit_code == 1
    assert answer(result) == {"status": "tampered", "findings": [
        {"chain": "guild:111", "entry_id": str(guild[-1]["id"]), "problem": "head_changed"}]}

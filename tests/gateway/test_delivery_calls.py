"""Call events over a real WebSocket (docs/reference/events.md): CALL_CREATE, CALL_UPDATE and CALL_DELETE carry
the whole Call and reach exactly the conversation's participants, on every connection of theirs, in commit
order; never an outsider, an instance administrator outside the conversation, or a participant of another
conversation. READY lists the ongoing calls of the user's conversations."""

from __future__ import annotations

from typing import Any

import pytest

from meadhall.social.calls.service import ready_calls
from tests.support.calls import VOICE, conversation, decline, flags, join, leave, ongoing, start, states
from tests.support.delivery import of_type, online, refused, second_device, seen
from tests.support.factories import make_admin
from tests.support.shapes import is_id

CALL_EVENTS = ("CALL_CREATE", "CALL_UPDATE", "CALL_DELETE")
CALL_FIELDS = {"id", "channel_id", "initiator_id", "status", "media", "created_at", "started_at", "ended_at",
               "duration_seconds", "end_reason", "participants"}


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return dict(VOICE)


def calls_seen(got: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str]]:
    return [(t, d["status"]) for t, d in got if t in CALL_EVENTS]


async def test_call_events_reach_the_participants_only(gateway, client, api, accounts, rt):
    alice, bob, carol, outsider, admin = [await accounts.register(n)
                                          for n in ("alice", "bob", "carol", "outsider", "admin")]
    await make_admin(rt, admin)
    phone = await second_device(client, bob)
    cid = await conversation(api, alice, bob, carol)
    a, b1, b2, c, o, adm = await online(gateway, client, alice, bob, phone, carol, outsider, admin)

    created = (await start(api, alice, cid))["call"]
    await join(api, bob, cid)
    await flags(api, bob, cid, camera=True)
    await decline(api, carol, cid)
    final = (await leave(api, alice, cid))["call"]

    expected = [("CALL_CREATE", "ringing"), ("CALL_UPDATE", "active"), ("CALL_UPDATE", "active"),
                ("CALL_UPDATE", "active"), ("CALL_DELETE", "ended")]
    for account, conns in ((alice, (a,)), (bob, (b1, b2)), (carol, (c,))):
        for got in await seen(client, account, *conns):
            assert calls_seen(got) == expected
            [first] = of_type(got, "CALL_CREATE")
            [last] = of_type(got, "CALL_DELETE")
            assert set(first) == CALL_FIELDS and first == created and last == final
            assert is_id(first["id"]) and first["channel_id"] == cid
    await refused(client, outsider, o, only=CALL_EVENTS)
    await refused(client, admin, adm, only=CALL_EVENTS)


async def test_calls_of_two_conversations_stay_apart(gateway, client, api, accounts, rt):
    alice, bob, carol = [await accounts.register(n) for n in ("alice", "bob", "carol")]
    with_bob = await conversation(api, alice, bob)
    with_carol = await conversation(api, alice, carol)
    a, b, c = await online(gateway, client, alice, bob, carol)

    await start(api, alice, with_bob)
    await join(api, bob, with_bob)
    # alice moves to the other conversation's call: the first one ends (one voice context at a time).
    await start(api, alice, with_carol)

    [got_a] = await seen(client, alice, a)
    assert [(t, d["channel_id"], d["status"]) for t, d in got_a if t in CALL_EVENTS] == [
        ("CALL_CREATE", with_bob, "ringing"), ("CALL_UPDATE", with_bob, "active"),
        ("CALL_DELETE", with_bob, "ended"), ("CALL_CREATE", with_carol, "ringing")]
    [got_b] = await seen(client, bob, b)
    assert [(t, d["channel_id"]) for t, d in got_b if t in CALL_EVENTS] == [
        ("CALL_CREATE", with_bob), ("CALL_UPDATE", with_bob), ("CALL_DELETE", with_bob)]
    [got_c] = await seen(client, carol, c)
    assert [(t, d["channel_id"]) for t, d in got_c if t in CALL_EVENTS] == [("CALL_CREATE", with_carol)]


async def test_ready_lists_the_ongoing_calls_of_the_users_conversations(gateway, client, api, accounts, rt):
    alice, bob, carol, dave, outsider = [await accounts.register(n)
                                         for n in ("alice", "bob", "carol", "dave", "outsider")]
    ringing = await conversation(api, alice, bob)
    active = await conversation(api, alice, bob, carol)
    finished = await conversation(api, alice, dave)
    await start(api, alice, ringing)
    await start(api, bob, active)
    await join(api, carol, active)
    await start(api, dave, finished)
    await leave(api, dave, finished)

    ready_a = await (await gateway.connect()).identify(alice["token"])
    assert sorted(c["channel_id"] for c in ready_a["calls"]) == sorted([ringing, active])
    assert {c["channel_id"]: c for c in ready_a["calls"]}[active] == await ongoing(api, alice, active)
    ready_c = await (await gateway.connect()).identify(carol["token"])
    [only] = ready_c["calls"]
    assert only["channel_id"] == active and states(only)[carol.id] == "joined"
    ready_o = await (await gateway.connect()).identify(outsider["token"])
    assert ready_o["calls"] == []


async def test_ready_calls_take_a_fixed_number_of_queries(rt, api, accounts, assert_query_count):
    alice = await accounts.register("alice")
    others = [await accounts.register(f"u{n}") for n in range(6)]
    for other in others:
        await start(api, other, await conversation(api, alice, other))
    async with rt.read() as uow:
        with assert_query_count(2):
            got = await ready_calls(uow.conn, int(alice.id))
    assert len(got) == 6 and all(len(c["participants"]) == 2 for c in got)


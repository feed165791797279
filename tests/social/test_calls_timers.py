"""What happens to calls without a request of a participant (docs/social.md, "Calls"): the 60-second ringing
timeout and the 120-second disconnection rule, run by one node per period with a moved clock; and the
conversation's changes (a participant removed, the conversation deleted) through its hook."""

from __future__ import annotations

from typing import Any

import pytest

from meadhall.accounts.presence import touch
from meadhall.core.clock import iso
from meadhall.realtime.jobs import Jobs
from meadhall.social.calls.jobs import disconnect_gone, expire_ringing
from meadhall.social.conversations.hooks import ParticipantsLeft, announce_participants_left
from tests.support.calls import (
    VOICE,
    call_url,
    conversation,
    decline,
    join,
    ongoing,
    start,
    states,
    stored_call,
)
from tests.support.http import assert_error


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return dict(VOICE)


async def people(accounts: Any, *names: str) -> list[Any]:
    return [await accounts.register(n) for n in names]


def call_events(capture_events: Any) -> list[tuple[str, str]]:
    return [(e.type, e.data["status"]) for e in capture_events if e.type.startswith("CALL_")]


# --- ringing timeout -------------------------------------------------------------------------------------

async def test_an_unanswered_call_is_missed_after_60_seconds(api, accounts, rt, clock, capture_events):
    alice, bob, carol = await people(accounts, "alice", "bob", "carol")
    cid = await conversation(api, alice, bob, carol)
    await start(api, alice, cid)
    await decline(api, carol, cid)

    clock.advance(59.9)
    assert await expire_ringing(rt) == 0
    assert (await ongoing(api, bob, cid))["status"] == "ringing"

    clock.advance(0.2)
    assert await expire_ringing(rt) == 1

    assert_error(await api.request("GET", call_url(cid), bob, expect=None), 404, "call.not_found")
    await capture_events.settle()
    deleted = capture_events.of_type("CALL_DELETE")[-1].data
    assert (deleted["status"], deleted["end_reason"], deleted["ended_at"]) == ("missed", "timeout", iso(clock.now()))
    assert states(deleted) == {alice.id: "left", bob.id: "missed", carol.id: "declined"}
    assert set(capture_events.of_type("CALL_DELETE")[-1].users) == {int(alice.id), int(bob.id), int(carol.id)}
    assert await expire_ringing(rt) == 0  # nothing rings any more


async def test_in_an_active_call_who_still_rings_after_60_seconds_has_missed_it(api, accounts, rt, clock,
                                                                                capture_events):
    alice, bob, carol = await people(accounts, "alice", "bob", "carol")
    cid = await conversation(api, alice, bob, carol)
    await start(api, alice, cid)
    await join(api, bob, cid)
    clock.advance(61)

    assert await expire_ringing(rt) == 1

    call = await ongoing(api, alice, cid)
    assert call["status"] == "active" and states(call) == {alice.id: "joined", bob.id: "joined", carol.id: "missed"}
    await capture_events.settle()
    assert call_events(capture_events)[-1] == ("CALL_UPDATE", "active")
    assert capture_events.of_type("CALL_UPDATE")[-1].data == call
    assert await expire_ringing(rt) == 0
    # Having missed it, carol may still join while it goes on.
    assert states((await join(api, carol, cid))["call"])[carol.id] == "joined"


async def test_the_timeout_counts_from_the_start_of_ringing(api, accounts, rt, clock):
    alice, bob, carol, dave = await people(accounts, "alice", "bob", "carol", "dave")
    early = await conversation(api, alice, bob)
    late = await conversation(api, carol, dave)
    await start(api, alice, early)
    clock.advance(30)
    await start(api, carol, late)
    clock.advance(31)
    assert await expire_ringing(rt) == 1
    assert_error(await api.request("GET", call_url(early), bob, expect=None), 404, "call.not_found")
    assert (await ongoing(api, dave, late))["status"] == "ringing"


# --- disconnection --------------------------------------------------------------------------------------------

async def test_a_participant_gone_from_the_gateway_for_120_seconds_leaves(api, accounts, rt, clock, capture_events):
    alice, bob, carol = await people(accounts, "alice", "bob", "carol")
    cid = await conversation(api, alice, bob, carol)
    for who in (alice, bob, carol):
        await touch(rt, int(who.id), in_client=True)  # each has a gateway connection
    await start(api, alice, cid)
    await join(api, bob, cid)
    await join(api, carol, cid)

    clock.advance(100)
    for who in (alice, bob):  # still heartbeating; carol's connections are gone
        await touch(rt, int(who.id), in_client=True)
    assert await disconnect_gone(rt) == 0
    clock.advance(21)
    assert await disconnect_gone(rt) == 1

    call = await ongoing(api, alice, cid)
    assert call["status"] == "active" and states(call)[carol.id] == "left"
    assert call["participants"][0]["left_at"] is None

    # Two joined, one of them gone: the call ends.
    clock.advance(121)
    await touch(rt, int(alice.id), in_client=True)
    assert await disconnect_gone(rt) == 1
    await capture_events.settle()
    deleted = capture_events.of_type("CALL_DELETE")[-1].data
    assert (deleted["status"], deleted["end_reason"]) == ("ended", "completed")
    assert deleted["duration_seconds"] == 242


async def test_a_participant_never_seen_on_the_gateway_counts_from_joining(api, accounts, rt, clock):
    alice, bob = await people(accounts, "alice", "bob")
    cid = await conversation(api, alice, bob)
    await start(api, alice, cid)
    clock.advance(100)
    await join(api, bob, cid)
    await touch(rt, int(alice.id), in_client=True)
    clock.advance(100)
    await touch(rt, int(alice.id), in_client=True)
    # alice joined 200 s ago but is connected; bob never connected and joined 100 s ago.
    assert await disconnect_gone(rt) == 0
    clock.advance(21)
    assert await disconnect_gone(rt) == 1
    call = await api.get(f"/channels/{cid}/calls", alice)
    assert (call["calls"][0]["status"], states(call["calls"][0])[bob.id]) == ("ended", "left")


# --- one node runs the timers ----------------------------------------------------------------------------------

async def test_one_runner_per_period_does_the_work(api, accounts, rt, clock, capture_events):
    alice, bob = await people(accounts, "alice", "bob")
    cid = await conversation(api, alice, bob)
    await start(api, alice, cid)
    clock.advance(61)
    [job] = [j for j in rt.jobs.jobs if j.name == "call-ringing"]
    assert [j.name for j in rt.jobs.jobs if j.name.startswith("call-")] == ["call-ringing", "call-disconnections"]
    assert all(j.leader_only for j in rt.jobs.jobs if j.name.startswith("call-"))
    other_node = Jobs(rt.store, clock)  # another node's scheduler, on the same shared store

    ran = [await rt.jobs.run_once(job), await other_node.run_once(job)]

    assert ran == [True, False]
    await capture_events.settle()
    assert call_events(capture_events) == [("CALL_CREATE", "ringing"), ("CALL_DELETE", "missed")]
    assert_error(await api.request("GET", call_url(cid), bob, expect=None), 404, "call.not_found")


# --- conversation changes ---------------------------------------------------------------------------------------

async def change(rt: Any, cid: str, removed: tuple[Any, ...], before: tuple[Any, ...], deleted: bool = False) -> None:
    """What the conversations' code announces inside its transaction when participants go."""
    gone = {int(a.id) for a in removed}
    audience = tuple(int(a.id) for a in before)
    async with rt.uow() as uow:
        await announce_participants_left(uow, ParticipantsLeft(
            channel_id=int(cid), removed=tuple(sorted(gone)), deleted=deleted,
            remaining=() if deleted else tuple(u for u in audience if u not in gone), audience=audience))


@pytest.mark.parametrize("answered", [True, False])
async def test_deleting_the_conversation_ends_its_call(api, accounts, rt, clock, capture_events, answered):
    alice, bob = await people(accounts, "alice", "bob")
    cid = await conversation(api, alice, bob)
    call_id = (await start(api, alice, cid))["call"]["id"]
    if answered:
        await join(api, bob, cid)
    clock.advance(7)

    await change(rt, cid, (alice,), (alice, bob), deleted=True)

    await capture_events.settle()
    [deleted] = capture_events.of_type("CALL_DELETE")
    assert set(deleted.users) == {int(alice.id), int(bob.id)}
    final = deleted.data
    assert final["end_reason"] == "conversation_deleted"
    if answered:
        assert (final["status"], final["duration_seconds"]) == ("ended", 7)
        assert states(final) == {alice.id: "left", bob.id: "left"}
    else:
        assert (final["status"], final["duration_seconds"]) == ("missed", 0)
        assert states(final) == {alice.id: "left", bob.id: "missed"}
    row, _ = await stored_call(rt, call_id)
    assert row["ongoing_channel_id"] is None


async def test_removal_from_the_group_leaves_or_declines_the_call(api, accounts, rt, capture_events):
    alice, bob, carol, dave = await people(accounts, "alice", "bob", "carol", "dave")
    cid = await conversation(api, alice, bob, carol, dave)
    await start(api, alice, cid)
    await join(api, bob, cid)
    await join(api, carol, cid)

    await change(rt, cid, (carol, dave), (alice, bob, carol, dave))

    call = await ongoing(api, alice, cid)
    assert call["status"] == "active"
    assert states(call) == {alice.id: "joined", bob.id: "joined", carol.id: "left", dave.id: "declined"}
    await capture_events.settle()
    last = capture_events.of_type("CALL_UPDATE")[-1]
    assert last.data == call and int(carol.id) in last.users  # the removed hear of their own departure

    # The initiator removed from a ringing call cancels it.
    other = await conversation(api, alice, bob, carol)
    await start(api, alice, other)
    await change(rt, other, (alice,), (alice, bob, carol))
    await capture_events.settle()
    final = capture_events.of_type("CALL_DELETE")[-1].data
    assert (final["channel_id"], final["status"], final["end_reason"]) == (other, "missed", "canceled")


async def test_a_change_without_a_call_does_nothing(api, accounts, rt, capture_events):
    alice, bob, carol = await people(accounts, "alice", "bob", "carol")
    cid = await conversation(api, alice, bob, carol)
    await change(rt, cid, (carol,), (alice, bob, carol))
    await change(rt, cid, (alice,), (alice, bob), deleted=True)
    await capture_events.settle()
    assert call_events(capture_events) == []


# --- the same through the conversation routes ----------------------------------------------------------------

async def test_leaving_a_one_to_one_during_a_call_ends_it_with_the_conversation(api, accounts, rt, capture_events):
    alice, bob = await people(accounts, "alice", "bob")
    cid = (await api.post("/users/@me/channels", alice, json={"recipient_id": bob.id}, expect=201))["channel"]["id"]
    await start(api, alice, cid)
    await join(api, bob, cid)

    await api.delete(f"/channels/{cid}/recipients/@me", bob)

    await capture_events.settle()
    [deleted] = capture_events.of_type("CALL_DELETE")
    assert (deleted.data["status"], deleted.data["end_reason"]) == ("ended", "conversation_deleted")
    assert set(deleted.users) == {int(alice.id), int(bob.id)}


async def test_a_participant_removed_from_the_group_leaves_its_call(api, accounts, rt, capture_events):
    alice, bob, carol, dave = await people(accounts, "alice", "bob", "carol", "dave")
    body = {"recipient_ids": [bob.id, carol.id, dave.id]}
    cid = (await api.post("/users/@me/channels/group", alice, json=body, expect=201))["channel"]["id"]
    await start(api, alice, cid)
    await join(api, bob, cid)
    await join(api, carol, cid)

    await api.delete(f"/channels/{cid}/recipients/{carol.id}", alice)

    call = await ongoing(api, alice, cid)
    assert call["status"] == "active" and states(call)[carol.id] == "left"
    assert_error(await api.request("GET", call_url(cid), carol, expect=None), 404, "channel.not_found")

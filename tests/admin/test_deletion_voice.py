"""Soft deletion of an account in voice (docs/admin.md "Soft deletion"): the account leaves its guild voice
room and its calls, with the usual events and the media server told, against the media-server stand-in."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.admin import admin_account, user_url
from tests.support.calls import conversation, join, ongoing, start, states, stored_call
from tests.support.http import assert_error
from tests.support.livekit_standin import StandIn
from tests.support.personas import hall
from tests.support.voice import join as join_voice
from tests.support.voice import room_name, stored, voice_room, voice_settings


@pytest.fixture
def settings_overrides(standin: StandIn) -> dict[str, Any]:
    return voice_settings(standin.url)


async def delete_user(api: Any, admin: Any, target: Any) -> None:
    await api.request("DELETE", user_url(target.id), admin, expect=204)


async def test_the_account_leaves_its_guild_voice_room(api, client, accounts, rt, standin, capture_events):
    admin = await admin_account(client, accounts, rt)
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    await join_voice(api, h.a, lounge)
    await join_voice(api, h.b, lounge)
    standin.participants[room_name(h.id, lounge)] = {h.a.id, h.b.id}
    await capture_events.reset()

    await delete_user(api, admin, h.a)

    assert await stored(rt, h.a) is None and await stored(rt, h.b) is not None
    assert [(c.room, c.identity) for c in standin.of("RemoveParticipant")] == [(room_name(h.id, lounge), h.a.id)]
    await capture_events.settle()
    [cleared] = [e for e in capture_events.of_type("VOICE_STATE_UPDATE") if e.data["user_id"] == h.a.id]
    assert cleared.data["channel_id"] is None
    assert int(h.a.id) not in cleared.users  # the account has left the guild: its members hear, it does not


async def test_an_active_one_to_one_call_ends(api, client, accounts, rt, standin, capture_events):
    admin = await admin_account(client, accounts, rt)
    alice, target = await accounts.register("alice"), await accounts.register("target")
    cid = await conversation(api, alice, target)
    call = (await start(api, alice, cid))["call"]
    await join(api, target, cid)
    standin.participants[f"dm_{cid}"] = {alice.id, target.id}
    await capture_events.reset()

    await delete_user(api, admin, target)

    row, parts = await stored_call(rt, call["id"])
    assert (row["status"], row["end_reason"]) == ("ended", "completed")
    assert {str(uid): p["state"] for uid, p in parts.items()} == {alice.id: "left", target.id: "left"}
    assert_error(await api.request("GET", f"/channels/{cid}/call", alice, expect=None), 404, "call.not_found")
    # The call has ended: both have left its media-server room.
    assert sorted((c.room, c.identity) for c in standin.of("RemoveParticipant")) == sorted(
        [(f"dm_{cid}", target.id), (f"dm_{cid}", alice.id)])
    await capture_events.settle()
    [ended] = capture_events.of_type("CALL_DELETE")
    assert ended.users == tuple(sorted((int(alice.id), int(target.id))))


async def test_a_ringing_one_to_one_call_is_declined(api, client, accounts, rt, standin):
    admin = await admin_account(client, accounts, rt)
    alice, target = await accounts.register("alice"), await accounts.register("target")
    cid = await conversation(api, alice, target)
    call = (await start(api, alice, cid))["call"]

    await delete_user(api, admin, target)

    row, parts = await stored_call(rt, call["id"])
    assert (row["status"], row["end_reason"]) == ("declined", "declined")
    assert parts[int(target.id)]["state"] == "declined"
    # Never joined, the account was never in the room; the call is over, so its initiator is out of it.
    assert [(c.room, c.identity) for c in standin.of("RemoveParticipant")] == [(f"dm_{cid}", alice.id)]


async def test_a_group_call_goes_on_without_the_account(api, client, accounts, rt, standin):
    admin = await admin_account(client, accounts, rt)
    alice, bob, carol, target = [await accounts.register(n) for n in ("alice", "bob", "carol", "target")]
    cid = await conversation(api, alice, bob, carol, target)
    await start(api, alice, cid)
    await join(api, bob, cid)
    await join(api, target, cid)

    await delete_user(api, admin, target)

    call = await ongoing(api, alice, cid)
    assert call["status"] == "active"
    assert states(call)[target.id] == "left" and states(call)[bob.id] == "joined"
    assert [(c.room, c.identity) for c in standin.of("RemoveParticipant")] == [(f"dm_{cid}", target.id)]

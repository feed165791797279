"""Calls in direct conversations (docs/social.md, "Calls"): starting, joining, declining, leaving, flags, the
ongoing call and the history, every transition of the call table with its CALL_* event to the
conversation's participants only, the media-server credentials, and every refusal."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest

from meadhall.core.clock import iso
from meadhall.core.errors import AppError
from meadhall.social.calls.service import create_call_rows
from meadhall.social.conversations.access import load_conversation
from tests.support.calls import (
    MEDIA_KEY,
    VOICE,
    add_participant,
    block,
    call_url,
    claims,
    conversation,
    decline,
    flags,
    join,
    leave,
    ongoing,
    participant,
    start,
    states,
    stored_call,
)
from tests.support.guilds import make_guild
from tests.support.http import assert_error, invalid

CALL_FIELDS = {"id", "channel_id", "initiator_id", "status", "media", "created_at", "started_at", "ended_at",
               "duration_seconds", "end_reason", "participants"}
PARTICIPANT_FIELDS = {"user_id", "state", "microphone", "camera", "screen", "joined_at", "left_at"}


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return dict(VOICE)


async def people(accounts: Any, *names: str) -> list[Any]:
    return [await accounts.register(n) for n in names]


def calls_of(capture_events: Any, type_: str) -> list[Any]:
    return capture_events.of_type(type_)


# --- start -----------------------------------------------------------------------------------------------

async def test_start_rings_the_others_and_answers_media_credentials(api, accounts, rt, settings, clock,
                                                                    capture_events):
    alice, bob, carol, outsider = await people(accounts, "alice", "bob", "carol", "outsider")
    await accounts.register("dave")
    cid = await conversation(api, alice, bob, carol)

    body = await start(api, alice, cid)

    assert set(body) == {"call", "token", "url", "room"}
    call = body["call"]
    assert set(call) == CALL_FIELDS and all(set(p) == PARTICIPANT_FIELDS for p in call["participants"])
    assert call["channel_id"] == cid and call["initiator_id"] == alice.id
    assert (call["status"], call["media"], call["end_reason"], call["duration_seconds"]) == ("ringing", "audio", None, 0)
    assert call["created_at"] == iso(clock.now()) and call["started_at"] is None and call["ended_at"] is None
    assert states(call) == {alice.id: "joined", bob.id: "ringing", carol.id: "ringing"}
    me = participant(call, alice)
    assert (me["microphone"], me["camera"], me["screen"]) == (True, False, False)
    assert me["joined_at"] == iso(clock.now()) and me["left_at"] is None
    assert participant(call, bob)["microphone"] is False and participant(call, bob)["joined_at"] is None
    assert body["room"] == f"dm_{cid}" and body["url"] == settings.MEDIA_PUBLIC_URL

    await capture_events.settle()
    [created] = capture_events.of_type("CALL_CREATE")
    assert created.data == call and set(created.users) == {int(alice.id), int(bob.id), int(carol.id)}
    assert int(outsider.id) not in created.users
    assert await ongoing(api, bob, cid) == call


async def test_the_token_is_signed_for_the_call_room_and_lasts_ten_minutes(api, accounts, rt, clock):
    alice, bob = await people(accounts, "alice", "bob")
    await api.patch("/users/@me", alice, json={"display_name": "Alice Smith"})
    cid = await conversation(api, alice, bob)
    clock.advance(30)

    token = (await start(api, alice, cid))["token"]

    c = claims(token)
    assert c["iss"] == MEDIA_KEY and c["sub"] == alice.id and c["name"] == "Alice Smith"
    assert abs(c["exp"] - (clock.now() + timedelta(minutes=10)).timestamp()) <= 1.5
    assert c["video"] == {"roomJoin": True, "room": f"dm_{cid}", "canPublish": True, "canSubscribe": True,
                          "canPublishData": True,
                          "canPublishSources": ["microphone", "camera", "screen_share", "screen_share_audio"]}
    assert json.loads(c["metadata"]) == {"priority_speaker": False, "push_to_talk_required": False}
    with pytest.raises(Exception):
        claims(token, secret="another-secret-0123456789abcdef0123456789")


async def test_a_video_call_starts_with_the_initiators_camera_on(api, accounts, rt):
    alice, bob = await people(accounts, "alice", "bob")
    cid = await conversation(api, alice, bob)
    call = (await start(api, alice, cid, "video"))["call"]
    assert call["media"] == "video"
    assert (participant(call, alice)["microphone"], participant(call, alice)["camera"]) == (True, True)
    invalid(await api.request("POST", call_url(cid), alice, json={"media": "hologram"}, expect=None), "media")


async def test_start_refusals(api, accounts, rt, client):
    alice, bob, carol, outsider = await people(accounts, "alice", "bob", "carol", "outsider")
    cid = await conversation(api, alice, bob)
    r = await api.request("POST", call_url(cid), outsider, expect=None)
    assert_error(r, 404, "channel.not_found")
    for raw in ("123", "not-an-id", "99999999999999999999999"):
        assert_error(await api.request("POST", call_url(raw), alice, expect=None), 404, "channel.not_found")
    guild = await make_guild(client, alice)
    r = await api.request("POST", call_url(guild["system_channel_id"]), alice, expect=None)
    assert_error(r, 422, "channel.wrong_type")
    # A guild room the caller cannot see is not revealed.
    r = await api.request("POST", call_url(guild["system_channel_id"]), outsider, expect=None)
    assert_error(r, 404, "channel.not_found")

    first = (await start(api, alice, cid))["call"]
    r = await api.request("POST", call_url(cid), bob, expect=None)
    assert assert_error(r, 409, "call.already_exists")["call_id"] == first["id"]


@pytest.mark.parametrize("blocker", ["caller", "other"])
async def test_a_block_prevents_calls_in_a_one_to_one_but_not_in_a_group(api, accounts, rt, blocker):
    alice, bob, carol = await people(accounts, "alice", "bob", "carol")
    one = await conversation(api, alice, bob)
    group = await conversation(api, alice, bob, carol)
    await block(rt, *((alice, bob) if blocker == "caller" else (bob, alice)))

    assert_error(await api.request("POST", call_url(one), alice, expect=None), 403, "relationship.blocked")
    await start(api, alice, group)


async def test_a_block_made_during_a_call_does_not_end_it_but_refuses_joining(api, accounts, rt):
    alice, bob = await people(accounts, "alice", "bob")
    cid = await conversation(api, alice, bob)
    await start(api, alice, cid)
    await block(rt, bob, alice)
    assert (await ongoing(api, alice, cid))["status"] == "ringing"
    assert_error(await api.request("POST", call_url(cid, "/join"), bob, expect=None), 403, "relationship.blocked")


async def test_concurrent_starts_make_one_call(api, accounts, rt):
    alice, bob = await people(accounts, "alice", "bob")
    cid = await conversation(api, alice, bob)
    answers = await asyncio.gather(*(api.request("POST", call_url(cid), who, expect=None)
                                     for who in (alice, bob, alice, bob)))
    created = [r for r in answers if r.status_code == 201]
    assert len(created) == 1, [r.text for r in answers]
    call_id = created[0].json()["call"]["id"]
    for r in answers:
        if r.status_code != 201:
            assert assert_error(r, 409, "call.already_exists")["call_id"] == call_id


async def test_voice_disabled_refuses_start_and_join(api, accounts, rt, settings):
    alice, bob, carol = await people(accounts, "alice", "bob", "carol")
    cid = await conversation(api, alice, bob, carol)
    await start(api, alice, cid)
    other = await conversation(api, alice, carol)
    settings.MEDIA_API_KEY = None  # voice off: the media server is not configured

    assert_error(await api.request("POST", call_url(other), alice, expect=None), 403, "voice.disabled")
    assert_error(await api.request("POST", call_url(cid, "/join"), bob, expect=None), 403, "voice.disabled")
    # What needs no media server still works: the call can be declined, read and left.
    await decline(api, carol, cid)
    assert (await ongoing(api, bob, cid))["status"] == "ringing"
    await leave(api, alice, cid)


# --- join, decline, leave ----------------------------------------------------------------------------------

async def test_joining_makes_the_call_active_with_a_fresh_token(api, accounts, rt, clock, capture_events):
    alice, bob = await people(accounts, "alice", "bob")
    cid = await conversation(api, alice, bob)
    await start(api, alice, cid)
    clock.advance(5)

    body = await join(api, bob, cid)

    call = body["call"]
    assert call["status"] == "active" and call["started_at"] == iso(clock.now())
    me = participant(call, bob)
    assert (me["state"], me["microphone"], me["camera"], me["joined_at"]) == ("joined", True, False, iso(clock.now()))
    c = claims(body["token"])
    assert c["sub"] == bob.id and c["video"]["room"] == f"dm_{cid}" and body["room"] == f"dm_{cid}"
    await capture_events.settle()
    [update] = capture_events.of_type("CALL_UPDATE")
    assert update.data == call and set(update.users) == {int(alice.id), int(bob.id)}

    # Already joined: the same answer, a fresh token, and nothing to tell anybody.
    clock.advance(60)
    again = await join(api, bob, cid)
    assert again["call"] == call and claims(again["token"])["exp"] > c["exp"]
    await capture_events.settle()
    assert len(capture_events.of_type("CALL_UPDATE")) == 1


async def test_join_refusals(api, accounts, rt):
    alice, bob, outsider = await people(accounts, "alice", "bob", "outsider")
    cid = await conversation(api, alice, bob)
    assert_error(await api.request("POST", call_url(cid, "/join"), bob, expect=None), 404, "call.not_found")
    await start(api, alice, cid)
    assert_error(await api.request("POST", call_url(cid, "/join"), outsider, expect=None), 404, "channel.not_found")


async def test_leaving_and_rejoining_an_active_call(api, accounts, rt, capture_events):
    alice, bob, carol = await people(accounts, "alice", "bob", "carol")
    cid = await conversation(api, alice, bob, carol)
    await start(api, alice, cid)
    await join(api, bob, cid)
    await join(api, carol, cid)

    call = (await leave(api, carol, cid))["call"]
    assert call["status"] == "active" and participant(call, carol)["state"] == "left"
    assert participant(call, carol)["left_at"] is not None and participant(call, carol)["microphone"] is False
    call = (await join(api, carol, cid))["call"]
    assert call["status"] == "active" and participant(call, carol)["state"] == "joined"
    assert participant(call, carol)["left_at"] is None
    await capture_events.settle()
    assert [e.type for e in capture_events if e.type.startswith("CALL_")] == ["CALL_CREATE"] + ["CALL_UPDATE"] * 4


async def test_the_call_ends_when_fewer_than_two_remain(api, accounts, rt, clock, capture_events):
    alice, bob, carol = await people(accounts, "alice", "bob", "carol")
    cid = await conversation(api, alice, bob, carol)
    await start(api, alice, cid)
    clock.advance(3)
    started = clock.now()
    await join(api, bob, cid)
    clock.advance(42.7)

    call = (await leave(api, alice, cid))["call"]

    assert call["status"] == "ended" and call["end_reason"] == "completed"
    assert call["ended_at"] == iso(clock.now()) and call["started_at"] == iso(started)
    assert call["duration_seconds"] == 42
    # The remaining participant has left; who never answered has missed it.
    assert states(call) == {alice.id: "left", bob.id: "left", carol.id: "missed"}
    await capture_events.settle()
    [deleted] = capture_events.of_type("CALL_DELETE")
    assert deleted.data == call and set(deleted.users) == {int(alice.id), int(bob.id), int(carol.id)}
    assert_error(await api.request("GET", call_url(cid), bob, expect=None), 404, "call.not_found")
    row, _ = await stored_call(rt, call["id"])
    assert row["ongoing_channel_id"] is None
    # A new call may start now.
    await start(api, bob, cid)


async def test_the_initiator_leaving_a_ringing_call_cancels_it(api, accounts, rt, capture_events):
    alice, bob, carol = await people(accounts, "alice", "bob", "carol")
    cid = await conversation(api, alice, bob, carol)
    await start(api, alice, cid)
    await decline(api, carol, cid)

    call = (await leave(api, alice, cid))["call"]

    assert (call["status"], call["end_reason"], call["duration_seconds"]) == ("missed", "canceled", 0)
    assert states(call) == {alice.id: "left", bob.id: "missed", carol.id: "declined"}
    await capture_events.settle()
    assert [e.type for e in capture_events if e.type.startswith("CALL_")] == ["CALL_CREATE", "CALL_UPDATE",
                                                                              "CALL_DELETE"]


async def test_declining(api, accounts, rt, capture_events):
    alice, bob, carol = await people(accounts, "alice", "bob", "carol")
    cid = await conversation(api, alice, bob, carol)
    await start(api, alice, cid)

    call = (await decline(api, bob, cid))["call"]
    assert call["status"] == "ringing" and states(call)[bob.id] == "declined"
    await capture_events.settle()
    assert capture_events.of_type("CALL_UPDATE")[-1].data == call

    call = (await decline(api, carol, cid))["call"]
    assert (call["status"], call["end_reason"]) == ("declined", "declined")
    assert states(call) == {alice.id: "left", bob.id: "declined", carol.id: "declined"}
    await capture_events.settle()
    [deleted] = capture_events.of_type("CALL_DELETE")
    assert deleted.data == call


async def test_declining_an_active_call_keeps_it_going(api, accounts, rt):
    alice, bob, carol = await people(accounts, "alice", "bob", "carol")
    cid = await conversation(api, alice, bob, carol)
    await start(api, alice, cid)
    await join(api, bob, cid)
    call = (await decline(api, carol, cid))["call"]
    assert call["status"] == "active" and states(call)[carol.id] == "declined"
    # A participant who declined may still join while the call goes on.
    call = (await join(api, carol, cid))["call"]
    assert states(call)[carol.id] == "joined"


async def test_state_refusals(api, accounts, rt):
    alice, bob, carol = await people(accounts, "alice", "bob", "carol")
    cid = await conversation(api, alice, bob, carol)
    for tail in ("/decline", "/leave"):
        assert_error(await api.request("POST", call_url(cid, tail), bob, expect=None), 404, "call.not_found")
    assert_error(await api.request("PATCH", call_url(cid, "/@me"), bob, json={"microphone": False}, expect=None),
                 404, "call.not_found")
    await start(api, alice, cid)
    # Declining is for who rings; leaving and flags for who is joined.
    assert_error(await api.request("POST", call_url(cid, "/decline"), alice, expect=None), 409, "call.invalid_state")
    assert_error(await api.request("POST", call_url(cid, "/leave"), bob, expect=None), 409, "call.invalid_state")
    assert_error(await api.request("PATCH", call_url(cid, "/@me"), bob, json={"camera": True}, expect=None),
                 409, "call.invalid_state")
    await decline(api, bob, cid)
    assert_error(await api.request("POST", call_url(cid, "/decline"), bob, expect=None), 409, "call.invalid_state")


async def test_flags(api, accounts, rt, capture_events):
    alice, bob, outsider = await people(accounts, "alice", "bob", "outsider")
    cid = await conversation(api, alice, bob)
    await start(api, alice, cid)

    call = (await flags(api, alice, cid, microphone=False, camera=True, screen=True))["call"]
    me = participant(call, alice)
    assert (me["microphone"], me["camera"], me["screen"]) == (False, True, True)
    await capture_events.settle()
    [update] = capture_events.of_type("CALL_UPDATE")
    assert update.data == call and set(update.users) == {int(alice.id), int(bob.id)}
    # Nothing changes: nothing to tell.
    await flags(api, alice, cid, camera=True)
    await capture_events.settle()
    assert len(capture_events.of_type("CALL_UPDATE")) == 1

    invalid(await api.request("PATCH", call_url(cid, "/@me"), alice, json={"camera": None}, expect=None), "body")
    invalid(await api.request("PATCH", call_url(cid, "/@me"), alice, json={"screen": 1}, expect=None), "screen")
    r = await api.request("PATCH", call_url(cid, "/@me"), outsider, json={"camera": True}, expect=None)
    assert_error(r, 404, "channel.not_found")


async def test_a_participant_added_during_the_call_gets_an_entry_when_joining(api, accounts, rt):
    alice, bob, carol, dave = await people(accounts, "alice", "bob", "carol", "dave")
    cid = await conversation(api, alice, bob, carol)
    await start(api, alice, cid)
    await add_participant(api, cid, alice, dave)
    assert dave.id not in states(await ongoing(api, dave, cid))
    assert_error(await api.request("POST", call_url(cid, "/decline"), dave, expect=None), 409, "call.invalid_state")

    call = (await join(api, dave, cid))["call"]

    assert call["status"] == "active" and states(call)[dave.id] == "joined"


# --- one voice context -------------------------------------------------------------------------------------

async def test_starting_or_joining_a_call_leaves_the_other_one(api, accounts, rt, capture_events):
    alice, bob, carol, dave = await people(accounts, "alice", "bob", "carol", "dave")
    first = await conversation(api, alice, bob, carol)
    second = await conversation(api, alice, dave)
    await start(api, alice, first)
    await join(api, bob, first)
    await join(api, carol, first)

    await start(api, alice, second)

    call = await ongoing(api, bob, first)
    assert call["status"] == "active" and states(call)[alice.id] == "left"
    await capture_events.settle()
    update = capture_events.of_type("CALL_UPDATE")[-1]
    assert update.data == call and int(dave.id) not in update.users

    # Joining leaves too: bob moves to a call with dave; carol alone is left in the first one, which ends.
    third = await conversation(api, bob, dave)
    await start(api, dave, third)
    await join(api, bob, third)
    await capture_events.settle()
    ended = [e.data for e in capture_events.of_type("CALL_DELETE")]
    assert [(c["channel_id"], c["status"], c["end_reason"]) for c in ended] == [(first, "ended", "completed")]
    assert states(ended[0]) == {alice.id: "left", bob.id: "left", carol.id: "left"}
    assert states(await ongoing(api, dave, third)) == {bob.id: "joined", dave.id: "joined"}


# --- reading --------------------------------------------------------------------------------------------------

async def test_get_call_refusals(api, accounts, rt, client):
    alice, bob, outsider = await people(accounts, "alice", "bob", "outsider")
    cid = await conversation(api, alice, bob)
    assert_error(await api.request("GET", call_url(cid), alice, expect=None), 404, "call.not_found")
    await start(api, alice, cid)
    assert_error(await api.request("GET", call_url(cid), outsider, expect=None), 404, "channel.not_found")
    guild = await make_guild(client, alice)
    assert_error(await api.request("GET", call_url(guild["system_channel_id"]), alice, expect=None),
                 422, "channel.wrong_type")


async def test_history_newest_first_with_the_ongoing_call(api, accounts, rt, clock):
    alice, bob, outsider = await people(accounts, "alice", "bob", "outsider")
    cid = await conversation(api, alice, bob)
    ids = []
    for _ in range(3):
        ids.append((await start(api, alice, cid))["call"]["id"])
        clock.advance(1)
        await leave(api, alice, cid)
    ids.append((await start(api, bob, cid))["call"]["id"])

    page = await api.get(f"/channels/{cid}/calls", alice)
    assert [c["id"] for c in page["calls"]] == ids[::-1] and page["has_more"] is False
    assert page["calls"][0]["status"] == "ringing" and page["calls"][1]["end_reason"] == "canceled"
    assert page["calls"][0] == await ongoing(api, alice, cid)

    page = await api.get(f"/channels/{cid}/calls?limit=2", bob)
    assert [c["id"] for c in page["calls"]] == [ids[3], ids[2]] and page["has_more"] is True
    page = await api.get(f"/channels/{cid}/calls?limit=2&before={ids[2]}", bob)
    assert [c["id"] for c in page["calls"]] == [ids[1], ids[0]] and page["has_more"] is False

    assert_error(await api.request("GET", f"/channels/{cid}/calls", outsider, expect=None), 404, "channel.not_found")
    invalid(await api.request("GET", f"/channels/{cid}/calls?before=x", alice, expect=None), "before")
    invalid(await api.request("GET", f"/channels/{cid}/calls?limit=101", alice, expect=None), "limit")
    empty = await conversation(api, alice, outsider)
    assert await api.get(f"/channels/{empty}/calls", outsider) == {"calls": [], "has_more": False}


async def test_the_calls_bucket(api, accounts, rt):
    alice, bob = await people(accounts, "alice", "bob")
    cid = await conversation(api, alice, bob)
    for _ in range(10):
        await api.request("POST", call_url(cid, "/decline"), alice, expect=404)
    r = await api.request("POST", call_url(cid, "/leave"), alice, expect=429)
    assert assert_error(r, 429, "rate_limited")["bucket"] == "calls"
    # Reading and flags are under `global` only.
    await api.request("GET", call_url(cid), alice, expect=404)


async def test_the_unique_ongoing_call_decides_when_the_check_is_passed(api, accounts, rt):
    """Two starts that both found no call (on PostgreSQL, without the conversation's lock) meet at the
    unique ongoing-conversation column: the second answers 409 with the first one's id, and its
    transaction is still usable to look it up (a savepoint)."""
    alice, bob = await people(accounts, "alice", "bob")
    cid = await conversation(api, alice, bob)
    first = (await start(api, alice, cid))["call"]
    with pytest.raises(AppError) as caught:
        async with rt.uow() as uow:
            conv = await load_conversation(uow.conn, int(cid))
            assert conv is not None
            await create_call_rows(uow, conv, int(bob.id), "audio")
    assert caught.value.code == "call.already_exists" and caught.value.extra == {"call_id": first["id"]}
    assert (await ongoing(api, alice, cid)) == first

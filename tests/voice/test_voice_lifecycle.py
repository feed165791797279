"""How voice states end (docs/voice.md): the media server's webhooks (signature, journal, repeats), the
reconciliation job (ghosts, intruders, lost permissions), removal when the member may no longer be there
(kick, ban, leave, timeout, room deletion, lost CONNECT_VOICE), and one voice context per user with calls."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from sqlalchemy import update

from meadhall.core.clock import iso
from meadhall.core.limits import VOICE_GHOST_SECONDS
from meadhall.db.schema import users
from meadhall.voice import reconcile as job
from meadhall.voice.reconcile import reconcile
from tests.support.calls import conversation, ongoing, participant
from tests.support.calls import join as join_call
from tests.support.calls import start as start_call
from tests.support.guilds import override
from tests.support.http import assert_error, invalid
from tests.support.livekit_standin import sign_body, signed_webhook, webhook_event
from tests.support.personas import hall
from tests.support.voice import MEDIA_KEY, MEDIA_SECRET, join, room_name, stored, voice_room


async def webhook(client: Any, payload: dict[str, Any], *, secret: str = MEDIA_SECRET, bearer: bool = False) -> Any:
    body, token = signed_webhook(MEDIA_KEY, secret, payload)
    return await client.post("/api/v1/media/webhook", content=body, headers={
        "Authorization": f"Bearer {token}" if bearer else token, "Content-Type": "application/webhook+json"})


async def in_voice(api: Any, client: Any, accounts: Any, rt: Any, standin: Any) -> tuple[Any, str]:
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    await join(api, h.a, lounge)
    standin.participants[room_name(h.id, lounge)] = {h.a.id}
    return h, lounge


# --- webhooks ------------------------------------------------------------------------------------------

async def test_participant_left_clears_the_state_once_and_bad_signatures_are_refused(api, client, accounts, rt,
                                                                                   standin, capture_events):
    h, lounge = await in_voice(api, client, accounts, rt, standin)
    left = webhook_event("EV_1", "participant_left", room_name(h.id, lounge), h.a.id)

    r = await webhook(client, left, secret="not-the-secret-0123456789abcdef0123")
    assert_error(r, 401, "auth.unauthorized")
    body, _ = signed_webhook(MEDIA_KEY, MEDIA_SECRET, left)
    _, other = signed_webhook(MEDIA_KEY, MEDIA_SECRET, {**left, "id": "EV_other"})
    r = await client.post("/api/v1/media/webhook", content=body, headers={"Authorization": other})
    assert_error(r, 401, "auth.unauthorized")  # a signature of another body
    assert_error(await client.post("/api/v1/media/webhook", content=body), 401, "auth.unauthorized")
    assert (await stored(rt, h.a)) is not None
    await capture_events.reset()

    r = await webhook(client, left, bearer=True)
    assert r.status_code == 200 and r.json() == {}
    assert await stored(rt, h.a) is None
    await capture_events.settle()
    [ev] = capture_events.of_type("VOICE_STATE_UPDATE")
    assert ev.data["channel_id"] is None and ev.data["user_id"] == h.a.id

    # The repeat of a journaled event has no effect, even on a state made since.
    await join(api, h.a, lounge)
    await capture_events.reset()
    assert (await webhook(client, left)).status_code == 200
    assert (await stored(rt, h.a)) is not None
    await capture_events.settle()
    assert capture_events.of_type("VOICE_STATE_UPDATE") == []


async def test_a_signed_body_that_is_no_event_answers_422_and_an_unsigned_one_401(api, client, accounts, rt,
                                                                                    standin):
    h, lounge = await in_voice(api, client, accounts, rt, standin)
    room = {"name": room_name(h.id, lounge)}

    async def post(body: bytes, authorization: str | None) -> Any:
        headers = {"Content-Type": "application/webhook+json"}
        if authorization is not None:
            headers["Authorization"] = authorization
        return await client.post("/api/v1/media/webhook", content=body, headers=headers)

    not_events = {
        b"this is not JSON": "body", b"\xff\xfe\x00": "body", b"[]": "body", b'"participant_left"': "body",
        b'{"id": {"nested": true}, "event": "room_finished"}': "body",
        json.dumps({"event": "room_finished", "room": room}).encode(): "id",
        json.dumps({"id": "", "event": "room_finished", "room": room}).encode(): "id",
        json.dumps({"id": "EV_no_event", "room": room}).encode(): "event",
        json.dumps({"id": "E" * 129, "event": "room_finished", "room": room}).encode(): "id",
        json.dumps({"id": "EV_\u0000", "event": "room_finished", "room": room}).encode(): "id",
        json.dumps({"id": "EV_nul_event", "event": "room_finished\u0000", "room": room}).encode(): "event",
        json.dumps({"id": "EV_nul_room", "event": "room_finished", "room": {"name": "x\u0000"}}).encode(): "room",
    }
    for body, field in not_events.items():
        invalid(await post(body, sign_body(MEDIA_KEY, MEDIA_SECRET, body)), field)
        assert_error(await post(body, None), 401, "auth.unauthorized")
        wrong = sign_body(MEDIA_KEY, "not-the-secret-0123456789abcdef0123", body)
        assert_error(await post(body, wrong), 401, "auth.unauthorized")
        assert_error(await post(body, sign_body(MEDIA_KEY, MEDIA_SECRET, body + b" ")), 401, "auth.unauthorized")
    assert (await stored(rt, h.a)) is not None  # nothing was applied


async def test_room_finished_clears_the_room(api, client, accounts, rt, standin):
    h, lounge = await in_voice(api, client, accounts, rt, standin)
    other = await voice_room(client, h.owner, h.id, "Other")
    await join(api, h.b, lounge)
    await join(api, h.owner, other)
    assert (await webhook(client, webhook_event("EV_2", "room_finished", room_name(h.id, lounge)))).status_code == 200
    assert await stored(rt, h.a) is None and await stored(rt, h.b) is None
    assert (await stored(rt, h.owner)).channel_id == other


async def test_participant_left_of_a_call_room_takes_the_user_out_of_the_call(api, client, accounts, rt, standin):
    h = await hall(client, accounts, rt)
    cid = await conversation(api, h.a, h.b, h.owner)
    await start_call(api, h.a, cid)
    await join_call(api, h.b, cid)
    await join_call(api, h.owner, cid)
    assert (await webhook(client, webhook_event("EV_3", "participant_left", f"dm_{cid}", h.b.id))).status_code == 200
    assert participant(await ongoing(api, h.a, cid), h.b)["state"] == "left"


# --- reconciliation ------------------------------------------------------------------------------------

async def test_reconciliation_clears_a_ghost_after_the_grace_period(api, client, accounts, rt, standin, clock,
                                                                   capture_events):
    h, lounge = await in_voice(api, client, accounts, rt, standin)
    await join(api, h.b, lounge)  # never reaches the media server: a crashed client
    clock.advance(VOICE_GHOST_SECONDS + 1)
    assert (await reconcile(rt))["ghosts"] == 0  # first seen missing now
    clock.advance(VOICE_GHOST_SECONDS - 1)
    assert (await reconcile(rt))["ghosts"] == 0
    await capture_events.reset()
    clock.advance(2)
    assert (await reconcile(rt))["ghosts"] == 1
    assert await stored(rt, h.b) is None and (await stored(rt, h.a)) is not None
    await capture_events.settle()
    assert [e.data["user_id"] for e in capture_events.of_type("VOICE_STATE_UPDATE")] == [h.b.id]


async def test_reconciliation_removes_who_has_no_voice_state_and_who_lost_permission(api, client, accounts, rt,
                                                                                    standin):
    h, lounge = await in_voice(api, client, accounts, rt, standin)
    room = room_name(h.id, lounge)
    standin.participants[room] |= {h.b.id}  # on the media server without a voice state
    done = await reconcile(rt)
    assert done["removed"] == 1 and standin.participants[room] == {h.a.id}
    assert [(c.room, c.identity) for c in standin.of("RemoveParticipant")] == [(room, h.b.id)]

    # An instance ban made elsewhere (no hook ran): the next run clears the state and removes the user.
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(h.a.id)).values(banned_at=rt.clock.now()))
    assert (await reconcile(rt))["revoked"] == 1
    assert await stored(rt, h.a) is None and standin.participants[room] == set()


async def test_reconciliation_changes_nothing_while_the_media_server_is_down(api, client, accounts, rt, standin,
                                                                            clock):
    h, lounge = await in_voice(api, client, accounts, rt, standin)
    standin.participants.clear()
    await standin.stop()
    for _ in range(3):
        clock.advance(VOICE_GHOST_SECONDS)
        await reconcile(rt)
    assert (await stored(rt, h.a)) is not None


# --- removal -------------------------------------------------------------------------------------------

async def test_kick_ban_leave_timeout_room_deletion_and_lost_connect_remove_the_participant(api, client, accounts,
                                                                                          rt, standin, clock):
    h, lounge = await in_voice(api, client, accounts, rt, standin)
    room = room_name(h.id, lounge)

    async def gone(account: Any) -> None:
        assert await stored(rt, account) is None
        assert standin.of("RemoveParticipant")[-1].identity == account.id

    await api.delete(f"/guilds/{h.id}/members/{h.a.id}", h.owner)
    await gone(h.a)

    await join(api, h.b, lounge)
    standin.participants[room] = {h.b.id}
    await api.put(f"/guilds/{h.id}/bans/{h.b.id}", h.owner, json={})
    await gone(h.b)

    c = await accounts.register("carol")
    from tests.support.factories import add_member
    await add_member(rt, h.id, c)
    await join(api, c, lounge)
    standin.participants[room] = {c.id}
    await api.patch(f"/guilds/{h.id}/members/{c.id}", h.owner, json={"timeout_until": iso(clock.now() + timedelta(hours=1))})
    await gone(c)
    await api.patch(f"/guilds/{h.id}/members/{c.id}", h.owner, json={"timeout_until": None})

    await join(api, c, lounge)
    standin.participants[room] = {c.id}
    await override(client, h.owner, lounge, c.id, "member", deny="CONNECT_VOICE")
    await gone(c)

    await join(api, h.owner, lounge)
    standin.participants[room] = {h.owner.id}
    await api.delete(f"/channels/{lounge}", h.owner)
    await gone(h.owner)

    other = await voice_room(client, h.owner, h.id, "Other")
    await join(api, c, other)
    await api.delete(f"/users/@me/guilds/{h.id}", c)
    assert await stored(rt, c) is None


# --- one voice context ---------------------------------------------------------------------------------

async def test_joining_voice_leaves_the_call_and_joining_a_call_leaves_voice(api, client, accounts, rt, standin,
                                                                            capture_events):
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    cid = await conversation(api, h.a, h.b, h.owner)
    await start_call(api, h.a, cid)
    await join_call(api, h.b, cid)
    await join_call(api, h.owner, cid)

    await join(api, h.b, lounge)
    assert participant(await ongoing(api, h.a, cid), h.b)["state"] == "left"

    await capture_events.reset()
    await join_call(api, h.b, cid)
    assert await stored(rt, h.b) is None
    assert participant(await ongoing(api, h.a, cid), h.b)["state"] == "joined"
    await capture_events.settle()
    [ev] = capture_events.of_type("VOICE_STATE_UPDATE")
    assert ev.data["channel_id"] is None and ev.data["user_id"] == h.b.id
    assert standin.of("RemoveParticipant")[-1].room == room_name(h.id, lounge)


async def test_reconciliation_spares_who_joined_after_the_states_were_read(api, client, accounts, rt, standin,
                                                                         monkeypatch):
    h, lounge = await in_voice(api, client, accounts, rt, standin)
    read_before_the_join = await job._states_by_room(rt)  # b joins between this read and the room's listing
    await join(api, h.b, lounge)
    room = room_name(h.id, lounge)
    standin.participants[room] |= {h.b.id, h.outsider.id}

    async def stale(_rt: Any) -> Any:
        return read_before_the_join

    monkeypatch.setattr(job, "_states_by_room", stale)
    assert (await reconcile(rt))["removed"] == 1
    assert standin.participants[room] == {h.a.id, h.b.id}

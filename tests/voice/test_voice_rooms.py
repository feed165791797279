"""Guild voice rooms (docs/voice.md): joining with a media-server token whose grant follows the member's
permissions, the user limit, moves by joining, leaving, the list, own flags, READY, and every refusal."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from meadhall.core.clock import iso
from tests.support.guilds import make_role, override, room, set_default_permissions
from tests.support.http import assert_error, denied, invalid, not_found
from tests.support.personas import hall
from tests.support.voice import (
    MEDIA_KEY,
    claims,
    join,
    leave,
    own_flags,
    room_name,
    states,
    stored,
    voice_room,
)

STATE_FIELDS = {"guild_id", "channel_id", "user_id", "member", "microphone", "sound", "camera", "screen",
                "server_mute", "server_deafen", "joined_at"}


def voice_events(capture_events: Any) -> list[Any]:
    return capture_events.of_type("VOICE_STATE_UPDATE")


async def test_join_answers_a_signed_token_for_the_room_and_announces_the_state(api, client, accounts, rt, settings,
                                                                               clock, capture_events):
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    await capture_events.reset()

    body = await join(api, h.a, lounge)

    assert set(body) == {"token", "url", "room", "voice_state", "push_to_talk_required"}
    assert body["room"] == room_name(h.id, lounge) and body["url"] == settings.MEDIA_PUBLIC_URL
    assert body["push_to_talk_required"] is False
    c = claims(body["token"])
    assert (c["iss"], c["sub"], c["name"]) == (MEDIA_KEY, h.a.id, h.a["user"]["display_name"])
    assert abs(c["exp"] - (clock.now() + timedelta(minutes=10)).timestamp()) < 5
    video = c["video"]
    assert video["roomJoin"] is True and video["room"] == body["room"] and video["canSubscribe"] is True
    assert video["canPublish"] is True and video["canPublishData"] is True
    # The default role holds SPEAK, VIDEO and STREAM.
    assert set(video["canPublishSources"]) == {"microphone", "camera", "screen_share", "screen_share_audio"}
    assert json.loads(c["metadata"]) == {"priority_speaker": False, "push_to_talk_required": False}
    state = body["voice_state"]
    assert set(state) == STATE_FIELDS and state["member"]["user"]["id"] == h.a.id
    assert (state["guild_id"], state["channel_id"], state["user_id"]) == (h.id, lounge, h.a.id)
    assert (state["microphone"], state["sound"], state["camera"], state["screen"]) == (True, True, False, False)
    assert (state["server_mute"], state["server_deafen"]) == (False, False)
    assert state["joined_at"] == iso(clock.now())

    await capture_events.settle()
    [ev] = voice_events(capture_events)
    assert ev.data == state and set(ev.users) == {int(h.owner.id), int(h.a.id), int(h.b.id)}
    [msg] = capture_events.of_type("MESSAGE_CREATE")
    assert msg.data["channel_id"] == lounge and msg.data["system_event"]["type"] == "voice_join"
    assert msg.data["content"] == f"{h.a['user']['display_name']} joined the voice room."
    assert (await stored(rt, h.a)).channel_id == lounge


async def test_the_grant_follows_speak_video_stream_priority_and_voice_activity(api, client, accounts, rt):
    h = await hall(client, accounts, rt)
    await set_default_permissions(client, h.owner, h.id, "VIEW_CHANNEL|CONNECT_VOICE")
    lounge = await voice_room(client, h.owner, h.id)

    quiet = await join(api, h.a, lounge)
    c = claims(quiet["token"])
    assert c["video"].get("canPublish", False) is False and c["video"].get("canPublishSources", []) == []
    assert json.loads(c["metadata"]) == {"priority_speaker": False, "push_to_talk_required": True}
    assert quiet["push_to_talk_required"] is True and quiet["voice_state"]["microphone"] is False

    role = await make_role(client, h.owner, h.id, "stage", "SPEAK|PRIORITY_SPEAKER|USE_VAD")
    await api.put(f"/guilds/{h.id}/members/{h.b.id}/roles/{role['id']}", h.owner)
    loud = await join(api, h.b, lounge)
    c = claims(loud["token"])
    assert c["video"]["canPublish"] is True and c["video"]["canPublishSources"] == ["microphone"]
    assert json.loads(c["metadata"]) == {"priority_speaker": True, "push_to_talk_required": False}


async def test_refusals_of_join(api, client, accounts, rt):
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    hidden = await voice_room(client, h.owner, h.id, "Back room")
    await override(client, h.owner, hidden, h.id, "role", deny="VIEW_CHANNEL")
    muted = await voice_room(client, h.owner, h.id, "Closed")
    await override(client, h.owner, muted, h.id, "role", deny="CONNECT_VOICE")

    assert_error(await api.request("POST", f"/channels/{h.general}/voice/join", h.a, expect=None), 422,
                 "channel.wrong_type")
    not_found(await api.request("POST", f"/channels/{hidden}/voice/join", h.a, expect=None), "channel.not_found")
    not_found(await api.request("POST", f"/channels/{lounge}/voice/join", h.outsider, expect=None),
              "channel.not_found")
    denied(await api.request("POST", f"/channels/{muted}/voice/join", h.a, expect=None), "CONNECT_VOICE")
    assert await stored(rt, h.a) is None


async def test_user_limit_refuses_the_next_but_not_who_is_in_it(api, client, accounts, rt):
    h = await hall(client, accounts, rt)
    small = await voice_room(client, h.owner, h.id, "Booth", user_limit=1)
    await join(api, h.a, small)
    assert_error(await api.request("POST", f"/channels/{small}/voice/join", h.b, expect=None), 409,
                 "voice.channel_full")
    again = await join(api, h.a, small)  # already in it: a fresh token, the same state
    assert again["voice_state"]["channel_id"] == small
    await leave(api, h.a, small)
    await join(api, h.b, small)


async def test_joining_another_room_moves_and_leaving_is_idempotent(api, client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    hidden = await voice_room(client, h.owner, h.id, "Staff")
    await override(client, h.owner, hidden, h.id, "role", deny="VIEW_CHANNEL")
    await override(client, h.owner, hidden, h.a.id, "member", allow="VIEW_CHANNEL")
    await join(api, h.a, lounge)
    await own_flags(api, h.a, h.id, sound=False)
    await capture_events.reset()

    moved = await join(api, h.a, hidden)
    assert moved["voice_state"]["channel_id"] == hidden and moved["voice_state"]["sound"] is False
    await capture_events.settle()
    by_channel = {ev.data["channel_id"]: set(ev.users) for ev in voice_events(capture_events)}
    # Who cannot view the new room hears of a leave; who can, of the new room.
    assert by_channel == {hidden: {int(h.owner.id), int(h.a.id)}, None: {int(h.b.id)}}

    await capture_events.reset()
    await leave(api, h.a, lounge)  # not in that room any more: nothing happens
    assert (await stored(rt, h.a)).channel_id == hidden
    await leave(api, h.a, hidden)
    await leave(api, h.a, hidden)
    assert await stored(rt, h.a) is None
    await capture_events.settle()
    [ev] = voice_events(capture_events)
    assert ev.data["channel_id"] is None and ev.data["user_id"] == h.a.id


async def test_the_list_shows_only_rooms_the_caller_may_view(api, client, accounts, rt):
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    hidden = await voice_room(client, h.owner, h.id, "Staff")
    await override(client, h.owner, hidden, h.id, "role", deny="VIEW_CHANNEL")
    await join(api, h.a, lounge)
    await join(api, h.owner, hidden)

    assert {(s["user_id"], s["channel_id"]) for s in await states(api, h.owner, h.id)} == {
        (h.a.id, lounge), (h.owner.id, hidden)}
    assert [(s["user_id"], s["channel_id"]) for s in await states(api, h.b, h.id)] == [(h.a.id, lounge)]
    not_found(await api.request("GET", f"/guilds/{h.id}/voice-states", h.outsider, expect=None), "guild.not_found")


async def test_own_flags_need_their_permissions(api, client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    not_found(await api.request("PATCH", f"/guilds/{h.id}/voice-states/@me", h.a, json={"sound": False},
                                expect=None), "voice_state.not_found")
    await join(api, h.a, lounge)
    await override(client, h.owner, lounge, h.a.id, "member", deny="SPEAK|VIDEO|STREAM")
    for flag, permission in (("microphone", "SPEAK"), ("camera", "VIDEO"), ("screen", "STREAM")):
        denied(await api.request("PATCH", f"/guilds/{h.id}/voice-states/@me", h.a, json={flag: True}, expect=None),
               permission)
    invalid(await api.request("PATCH", f"/guilds/{h.id}/voice-states/@me", h.a, json={"sound": None}, expect=None),
            "body")
    await capture_events.reset()
    body = await own_flags(api, h.a, h.id, microphone=False, sound=False)
    assert (body["voice_state"]["microphone"], body["voice_state"]["sound"]) == (False, False)
    await capture_events.settle()
    [ev] = voice_events(capture_events)
    assert ev.data["sound"] is False and int(h.b.id) in ev.users


@pytest.mark.parametrize("settings_overrides", [{}], indirect=True)
async def test_every_voice_route_answers_voice_disabled_when_voice_is_off(api, client, accounts, rt):
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    for method, path, body in (
            ("POST", f"/channels/{lounge}/voice/join", None), ("POST", f"/channels/{lounge}/voice/leave", None),
            ("GET", f"/guilds/{h.id}/voice-states", None),
            ("PATCH", f"/guilds/{h.id}/voice-states/@me", {"sound": False}),
            ("PATCH", f"/guilds/{h.id}/voice-states/{h.a.id}", {"server_mute": True}),
            ("POST", f"/guilds/{h.id}/voice-states/{h.a.id}/move", {"channel_id": lounge}),
            ("DELETE", f"/guilds/{h.id}/voice-states/{h.a.id}", None),
            ("POST", f"/guilds/{h.id}/sounds/1/play", None),
            ("POST", "/media/webhook", None)):
        r = await api.request(method, path, h.owner, json=body, expect=None)
        assert_error(r, 403, "voice.disabled")


async def test_ready_lists_the_voice_states_of_rooms_the_user_may_view(api, client, accounts, rt, app):
    from meadhall.gateway.auth import GatewayIdentity
    from meadhall.gateway.ready import ready_payload

    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    hidden = await voice_room(client, h.owner, h.id, "Staff")
    await override(client, h.owner, hidden, h.id, "role", deny="VIEW_CHANNEL")
    await join(api, h.a, lounge)
    await join(api, h.owner, hidden)

    def who(account: Any) -> GatewayIdentity:
        return GatewayIdentity(user_id=int(account.id), session_id=0, is_instance_admin=False)

    ready = await ready_payload(rt, who(h.b), "s")
    [guild] = ready["guilds"]
    assert [(s["user_id"], s["channel_id"]) for s in guild["voice_states"]] == [(h.a.id, lounge)]
    assert guild["voice_states"][0]["member"]["user"]["id"] == h.a.id


async def test_a_room_that_is_not_voice_or_a_conversation(api, client, accounts, rt):
    h = await hall(client, accounts, rt)
    category = await room(client, h.owner, h.id, type="category", name="Cat")
    assert_error(await api.request("POST", f"/channels/{category['id']}/voice/join", h.a, expect=None), 422,
                 "channel.wrong_type")
    conv = await api.post("/users/@me/channels", h.a, json={"recipient_id": h.b.id}, expect=None)
    assert_error(await api.request("POST", f"/channels/{conv['channel']['id']}/voice/join", h.a, expect=None), 422,
                 "channel.wrong_type")

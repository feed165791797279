"""Voice moderation (docs/voice.md): server mute and deafen, moves, disconnection, each with its permission,
the hierarchy, its audit entry, its event, and its call arriving at the media server (the stand-in) with the
right room and identity; a media server that is down does not fail the request."""

from __future__ import annotations

from typing import Any

import pytest

from meadhall.db.schema import audit_log
from tests.support.guilds import give, override
from tests.support.http import assert_error, denied, not_found
from tests.support.livekit_standin import closed_port_url
from tests.support.personas import staffed_hall
from tests.support.voice import (
    claims,
    disconnect,
    join,
    moderate,
    move,
    room_name,
    stored,
    voice_room,
    voice_settings,
)

MOD = "MUTE_MEMBERS|DEAFEN_MEMBERS|MOVE_MEMBERS"


async def audit_actions(rt: Any, guild_id: str) -> list[tuple[str, dict[str, Any]]]:
    from sqlalchemy import select

    async with rt.engine.connect() as conn:
        rows = (await conn.execute(select(audit_log.c.action, audit_log.c.data)
                                   .where(audit_log.c.guild_id == int(guild_id), audit_log.c.action.like("voice.%"))
                                   .order_by(audit_log.c.id))).all()
    return [(r[0], r[1]) for r in rows]


async def setup(client: Any, accounts: Any, rt: Any, api: Any, standin: Any) -> tuple[Any, str, str]:
    h = await staffed_hall(client, accounts, rt, MOD)
    lounge = await voice_room(client, h.owner, h.id)
    stage = await voice_room(client, h.owner, h.id, "Stage")
    await join(api, h.member, lounge)
    standin.participants[room_name(h.id, lounge)] = {h.member.id}
    return h, lounge, stage


async def test_server_mute_and_deafen_reach_the_media_server(api, client, accounts, rt, standin, capture_events):
    h, lounge, _ = await setup(client, accounts, rt, api, standin)
    await capture_events.reset()

    body = await moderate(api, h.mod, h.id, h.member, server_mute=True)
    assert body["voice_state"]["server_mute"] is True and body["voice_state"]["server_deafen"] is False
    [update] = standin.of("UpdateParticipant")
    assert (update.room, update.identity) == (room_name(h.id, lounge), h.member.id)
    permission = update.body["permission"]
    assert "MICROPHONE" not in permission["can_publish_sources"] and "CAMERA" in permission["can_publish_sources"]
    assert permission["can_subscribe"] is True

    await moderate(api, h.mod, h.id, h.member, server_deafen=True)
    assert standin.of("UpdateParticipant")[-1].body["permission"].get("can_subscribe", False) is False
    await moderate(api, h.mod, h.id, h.member, server_mute=False)
    assert "MICROPHONE" in standin.of("UpdateParticipant")[-1].body["permission"]["can_publish_sources"]
    assert standin.refused == []

    assert [a for a, _ in await audit_actions(rt, h.id)] == ["voice.mute", "voice.deafen", "voice.mute"]
    assert [d["value"] for _, d in await audit_actions(rt, h.id)] == [True, True, False]
    await capture_events.settle()
    seen = [(e.data["server_mute"], e.data["server_deafen"]) for e in capture_events.of_type("VOICE_STATE_UPDATE")]
    assert seen == [(True, False), (True, True), (False, True)]
    # A rejoin keeps the moderators' flags and the token lacks the microphone while muted.
    await moderate(api, h.mod, h.id, h.member, server_mute=True)
    again = await join(api, h.member, lounge)
    assert "microphone" not in claims(again["token"])["video"]["canPublishSources"]


async def test_each_flag_needs_its_permission_and_the_hierarchy(api, client, accounts, rt, standin):
    h, lounge, _ = await setup(client, accounts, rt, api, standin)

    def patch(actor: Any, target: Any, **flags: Any) -> Any:
        return api.request("PATCH", f"/guilds/{h.id}/voice-states/{target.id}", actor, json=flags, expect=None)

    await override(client, h.owner, lounge, h.roles["mod"]["id"], "role", deny="DEAFEN_MEMBERS")
    denied(await patch(h.mod, h.member, server_deafen=True), "DEAFEN_MEMBERS")
    await moderate(api, h.mod, h.id, h.member, server_mute=True)  # muting is still allowed there
    await override(client, h.owner, lounge, h.roles["mod"]["id"], "role", deny="MUTE_MEMBERS")
    denied(await patch(h.mod, h.member, server_mute=False), "MUTE_MEMBERS")
    denied(await patch(h.member, h.member, server_mute=False), "MUTE_MEMBERS")
    # The hierarchy: not on oneself, not on the owner, not on an equal or higher rank.
    await join(api, h.owner, lounge)
    denied(await patch(h.owner, h.owner, server_mute=True), None)
    await join(api, h.mod, lounge)
    denied(await patch(h.member, h.mod, server_mute=True), "MUTE_MEMBERS")
    stage = await voice_room(client, h.owner, h.id, "Stage")
    await join(api, h.owner, stage)
    denied(await patch(h.mod, h.owner, server_mute=True), None)
    await give(client, h.owner, h.id, h.member, h.roles["top"]["id"])
    await join(api, h.member, stage)
    denied(await patch(h.mod, h.member, server_mute=True), None)
    not_found(await patch(h.owner, h.outsider, server_mute=True), "voice_state.not_found")
    assert len(standin.of("UpdateParticipant")) == 1


async def test_move_needs_move_members_in_both_rooms_and_moves_on_the_media_server(api, client, accounts, rt,
                                                                                 standin, capture_events):
    h, lounge, stage = await setup(client, accounts, rt, api, standin)
    full = await voice_room(client, h.owner, h.id, "Full", user_limit=1)
    await join(api, h.owner, full)
    text = (await api.post(f"/guilds/{h.id}/channels", h.owner, json={"type": "text", "name": "talk"},
                           expect=201))["channel"]["id"]
    assert_error(await api.request("POST", f"/guilds/{h.id}/voice-states/{h.member.id}/move", h.mod,
                                   json={"channel_id": text}, expect=None), 422, "channel.wrong_type")
    await override(client, h.owner, stage, h.roles["mod"]["id"], "role", deny="MOVE_MEMBERS")
    denied(await api.request("POST", f"/guilds/{h.id}/voice-states/{h.member.id}/move", h.mod,
                             json={"channel_id": stage}, expect=None), "MOVE_MEMBERS")
    await capture_events.reset()

    body = await move(api, h.mod, h.id, h.member, full)  # the user limit does not apply to moves
    assert body["voice_state"]["channel_id"] == full and (await stored(rt, h.member)).channel_id == full
    [call] = standin.of("MoveParticipant")
    assert (call.room, call.identity, call.body["destination_room"]) == (
        room_name(h.id, lounge), h.member.id, room_name(h.id, full))
    assert [(a, d["from_channel_id"], d["to_channel_id"]) for a, d in await audit_actions(rt, h.id)] == [
        ("voice.move", lounge, full)]
    await capture_events.settle()
    assert [e.data["channel_id"] for e in capture_events.of_type("VOICE_STATE_UPDATE")] == [full]


async def test_a_media_server_without_move_gets_a_removal(api, client, accounts, rt, standin):
    h, lounge, stage = await setup(client, accounts, rt, api, standin)
    standin.supports_move = False
    await move(api, h.mod, h.id, h.member, stage)
    [removal] = standin.of("RemoveParticipant")
    assert (removal.room, removal.identity) == (room_name(h.id, lounge), h.member.id)


async def test_disconnect_removes_the_participant(api, client, accounts, rt, standin, capture_events):
    h, lounge, _ = await setup(client, accounts, rt, api, standin)
    denied(await api.request("DELETE", f"/guilds/{h.id}/voice-states/{h.member.id}", h.member, expect=None),
           "MOVE_MEMBERS")
    await capture_events.reset()
    await disconnect(api, h.mod, h.id, h.member)
    assert await stored(rt, h.member) is None
    [removal] = standin.of("RemoveParticipant")
    assert (removal.room, removal.identity) == (room_name(h.id, lounge), h.member.id)
    assert standin.participants[room_name(h.id, lounge)] == set()
    assert [a for a, _ in await audit_actions(rt, h.id)] == ["voice.disconnect"]
    await capture_events.settle()
    [ev] = capture_events.of_type("VOICE_STATE_UPDATE")
    assert ev.data["channel_id"] is None
    not_found(await api.request("DELETE", f"/guilds/{h.id}/voice-states/{h.member.id}", h.mod, expect=None),
              "voice_state.not_found")


@pytest.mark.parametrize("settings_overrides", [voice_settings(closed_port_url())], indirect=True)
async def test_a_media_server_that_is_down_does_not_fail_the_request(api, client, accounts, rt, standin):
    h = await staffed_hall(client, accounts, rt, MOD)
    lounge = await voice_room(client, h.owner, h.id)
    stage = await voice_room(client, h.owner, h.id, "Stage")
    await join(api, h.member, lounge)
    await moderate(api, h.mod, h.id, h.member, server_mute=True)
    await move(api, h.mod, h.id, h.member, stage)
    await join(api, h.member, lounge)
    await disconnect(api, h.mod, h.id, h.member)
    assert await stored(rt, h.member) is None

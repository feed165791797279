"""Who may be in a media room (docs/voice.md, "Who may be in a media room"): tokens live 10 minutes and cannot be
revoked, so when the media server (the stand-in) reports someone joining, anyone not allowed there is removed at
once and an allowed guild participant gets the restrictions in force again; the reconciliation job does both for
every room, so what the media server missed while down is applied when it is back."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from meadhall.voice.reconcile import reconcile
from tests.support.calls import conversation, ongoing, states
from tests.support.calls import join as join_call
from tests.support.calls import leave as leave_call
from tests.support.calls import start as start_call
from tests.support.conversations import remove_recipient
from tests.support.guilds import override
from tests.support.livekit_standin import Refused
from tests.support.personas import hall, staffed_hall
from tests.support.voice import claims, join, media_event, moderate, room_name, stored, voice_room


def removed(standin: Any) -> list[tuple[str, str]]:
    return [(c.room, c.identity) for c in standin.of("RemoveParticipant")]


async def joined_event(client: Any, room: str, identity: str) -> None:
    r = await media_event(client, "participant_joined", room, identity)
    assert r.status_code == 200 and r.json() == {}, r.text


async def test_tokens_live_ten_minutes_and_the_media_server_refuses_them_after(api, client, accounts, rt, standin,
                                                                               clock):
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    token = (await join(api, h.a, lounge))["token"]
    assert abs(claims(token)["exp"] - (clock.now() + timedelta(minutes=10)).timestamp()) < 5
    cid = await conversation(api, h.b, h.owner)
    call_token = (await start_call(api, h.b, cid))["token"]
    assert abs(claims(call_token)["exp"] - (clock.now() + timedelta(minutes=10)).timestamp()) < 5

    issued = clock.now().timestamp()
    assert standin.connect(token, at=issued + 9 * 60) == (room_name(h.id, lounge), h.a.id)
    with pytest.raises(Refused):
        standin.connect(token, at=issued + 11 * 60)


@pytest.mark.parametrize("how", ["kicked", "banned", "lost VIEW_CHANNEL"])
async def test_who_may_no_longer_be_there_is_removed_at_once_when_back_with_the_old_token(how, api, client, accounts,
                                                                                         rt, standin):
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    room = room_name(h.id, lounge)
    old = (await join(api, h.a, lounge))["token"]
    standin.connect((await join(api, h.b, lounge))["token"])
    standin.connect(old)
    if how == "kicked":
        await api.delete(f"/guilds/{h.id}/members/{h.a.id}", h.owner)
    elif how == "banned":
        await api.put(f"/guilds/{h.id}/bans/{h.a.id}", h.owner, json={})
    else:
        await override(client, h.owner, lounge, h.a.id, "member", deny="VIEW_CHANNEL")
    assert await stored(rt, h.a) is None and standin.participants[room] == {h.b.id}
    standin.calls.clear()

    assert standin.connect(old) == (room, h.a.id)  # the media server still takes the token it signed
    await joined_event(client, room, h.a.id)

    assert removed(standin) == [(room, h.a.id)]
    assert standin.participants[room] == {h.b.id}

    # Someone allowed there is not removed; an identity that is no user of ours is not ours to judge.
    standin.calls.clear()
    standin.participants[room] |= {"egress-recorder"}
    await joined_event(client, room, h.b.id)
    await joined_event(client, room, "egress-recorder")
    assert removed(standin) == [] and standin.participants[room] == {h.b.id, "egress-recorder"}


async def test_a_voice_room_admits_nobody_whose_state_is_elsewhere(api, client, accounts, rt, standin):
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    other = await voice_room(client, h.owner, h.id, "Other")
    old = (await join(api, h.a, lounge))["token"]
    await join(api, h.a, other)  # moved on: the token for the lounge still opens it
    standin.calls.clear()
    room = room_name(h.id, lounge)
    standin.connect(old)
    await joined_event(client, room, h.a.id)
    assert removed(standin) == [(room, h.a.id)]
    assert (await stored(rt, h.a)).channel_id == other


async def test_a_muted_and_deafened_member_back_with_the_token_from_before_gets_the_restrictions_again(
        api, client, accounts, rt, standin):
    h = await staffed_hall(client, accounts, rt, "MUTE_MEMBERS|DEAFEN_MEMBERS")
    lounge = await voice_room(client, h.owner, h.id)
    room = room_name(h.id, lounge)
    before = (await join(api, h.member, lounge))["token"]
    standin.connect(before)
    await moderate(api, h.mod, h.id, h.member, server_mute=True)
    await moderate(api, h.mod, h.id, h.member, server_deafen=True)
    held = standin.permission_of(room, h.member.id)
    assert "microphone" not in held["can_publish_sources"] and held["can_subscribe"] is False

    standin.connect(before)  # a network change: the client reconnects with the token it holds
    assert standin.permission_of(room, h.member.id) != held
    standin.calls.clear()
    await joined_event(client, room, h.member.id)

    [update] = standin.of("UpdateParticipant")
    assert (update.room, update.identity) == (room, h.member.id)
    assert standin.permission_of(room, h.member.id) == held
    assert removed(standin) == []

    # The sources it may publish now, not those of the token: VIDEO taken away since.
    await override(client, h.owner, lounge, h.member.id, "member", deny="VIDEO")
    standin.connect(before)
    await joined_event(client, room, h.member.id)
    now = standin.permission_of(room, h.member.id)
    assert now["can_publish_sources"] == ["screen_share", "screen_share_audio"] and now["can_subscribe"] is False


async def test_a_call_room_admits_only_the_joined_participants_of_its_ongoing_call(api, client, accounts, rt, standin):
    a, b, c, d = [await accounts.register(n) for n in ("ann", "ben", "cat", "dan")]
    cid = await conversation(api, a, b, c, d)
    room = f"dm_{cid}"
    tokens = {a.id: (await start_call(api, a, cid))["token"]}
    for who in (b, c, d):
        tokens[who.id] = (await join_call(api, who, cid))["token"]
    for token in tokens.values():
        standin.connect(token)
    await leave_call(api, c, cid)
    await remove_recipient(api, a, cid, d)
    assert standin.participants[room] == {a.id, b.id}
    standin.calls.clear()

    for who in (c, d):  # the one who left and the one removed from the group, back with their tokens
        standin.connect(tokens[who.id])
        await joined_event(client, room, who.id)
    assert removed(standin) == [(room, c.id), (room, d.id)]
    assert standin.participants[room] == {a.id, b.id}

    standin.calls.clear()
    await joined_event(client, room, b.id)
    assert standin.calls == []  # a joined participant: nothing to remove, nothing restricted in calls
    assert states(await ongoing(api, a, cid))[b.id] == "joined"


async def test_reconciliation_applies_the_removal_and_the_mute_missed_while_the_media_server_was_down(
        api, client, accounts, rt, standin):
    h = await staffed_hall(client, accounts, rt, "MUTE_MEMBERS")
    lounge = await voice_room(client, h.owner, h.id)
    room = room_name(h.id, lounge)
    for who in (h.member, h.mod):
        standin.connect((await join(api, who, lounge))["token"])
    await standin.stop()
    await moderate(api, h.mod, h.id, h.member, server_mute=True)  # the request does not fail
    await api.delete(f"/guilds/{h.id}/members/{h.mod.id}", h.owner, expect=204)
    await standin.start()
    assert standin.calls == [] and standin.participants[room] == {h.member.id, h.mod.id}
    assert "microphone" in standin.permission_of(room, h.member.id)["can_publish_sources"]

    done = await reconcile(rt)

    assert removed(standin) == [(room, h.mod.id)]
    assert standin.participants[room] == {h.member.id}
    assert "microphone" not in standin.permission_of(room, h.member.id)["can_publish_sources"]
    assert (done["removed"], done["restricted"]) == (1, 1)
    # In agreement now: the next run changes nothing.
    standin.calls.clear()
    again = await reconcile(rt)
    assert (again["removed"], again["restricted"]) == (0, 0)
    assert standin.of("UpdateParticipant") == [] and standin.of("RemoveParticipant") == []

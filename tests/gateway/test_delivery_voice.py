"""Voice events over a real WebSocket (docs/reference/events.md): VOICE_STATE_UPDATE reaches exactly the
members who may view the voice room (never a member who cannot, an outsider, or an instance administrator
outside the guild), on every connection of theirs; SOUNDBOARD_PLAY reaches the participants of that room only;
READY carries the voice states of the rooms the user may view. The media server is down here: that changes
nothing for the events."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import insert

from meadhall.core.text import norm
from meadhall.db.schema import sounds
from tests.support.delivery import of_type, online, refused, second_device, seen
from tests.support.factories import add_member, make_admin
from tests.support.guilds import make_guild, override
from tests.support.livekit_standin import closed_port_url
from tests.support.voice import join, leave, voice_room, voice_settings

VOICE_EVENTS = ("VOICE_STATE_UPDATE", "SOUNDBOARD_PLAY")


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return voice_settings(closed_port_url())


async def test_voice_state_updates_reach_the_rooms_viewers_only(gateway, client, api, accounts, rt):
    owner, viewer, blind, outsider, admin = [await accounts.register(n)
                                             for n in ("owner", "viewer", "blind", "outsider", "admin")]
    await make_admin(rt, admin)
    guild = await make_guild(client, owner)
    for account in (viewer, blind):
        await add_member(rt, guild["id"], account)
    lounge = await voice_room(client, owner, guild["id"])
    await override(client, owner, lounge, blind.id, "member", deny="VIEW_CHANNEL")
    phone = await second_device(client, viewer)
    o, v1, v2, b, out, adm = await online(gateway, client, owner, viewer, phone, blind, outsider, admin)

    state = (await join(api, owner, lounge))["voice_state"]
    await leave(api, owner, lounge)

    for account, conns in ((owner, (o,)), (viewer, (v1, v2))):
        for got in await seen(client, account, *conns):
            updates = of_type(got, "VOICE_STATE_UPDATE")
            assert updates == [state, {**state, "channel_id": None}]
    for account, conn in ((blind, b), (outsider, out), (admin, adm)):
        await refused(client, account, conn, only=VOICE_EVENTS)


async def test_soundboard_play_reaches_the_participants_of_that_room_only(gateway, client, api, accounts, rt):
    owner, near, far = [await accounts.register(n) for n in ("owner", "near", "far")]
    guild = await make_guild(client, owner)
    for account in (near, far):
        await add_member(rt, guild["id"], account)
    lounge = await voice_room(client, owner, guild["id"])
    other = await voice_room(client, owner, guild["id"], "Other")
    sound_id = rt.ids.next()
    async with rt.engine.begin() as conn:
        await conn.execute(insert(sounds).values(
            id=sound_id, guild_id=int(guild["id"]), kind="soundboard", name="horn", name_norm=norm("horn"),
            emoji=None, palette_event=None, file_id=rt.ids.next(), duration_ms=500, creator_id=None,
            created_at=rt.clock.now()))
    await join(api, owner, lounge)
    await join(api, near, lounge)
    await join(api, far, other)
    o, n, f = await online(gateway, client, owner, near, far)

    await api.post(f"/guilds/{guild['id']}/sounds/{sound_id}/play", owner, expect=204)

    for account, conn in ((owner, o), (near, n)):
        [got] = await seen(client, account, conn)
        [played] = of_type(got, "SOUNDBOARD_PLAY")
        assert (played["channel_id"], played["user_id"], played["sound"]["id"]) == (lounge, owner.id, str(sound_id))
    await refused(client, far, f, only=("SOUNDBOARD_PLAY",))


async def test_ready_carries_voice_states(gateway, client, api, accounts, rt):
    owner, member = [await accounts.register(n) for n in ("owner", "member")]
    guild = await make_guild(client, owner)
    await add_member(rt, guild["id"], member)
    lounge = await voice_room(client, owner, guild["id"])
    await join(api, owner, lounge)

    conn = await gateway.connect()
    ready = await conn.identify(member["token"])
    [snapshot] = ready["guilds"]
    assert [(s["user_id"], s["channel_id"]) for s in snapshot["voice_states"]] == [(owner.id, lounge)]

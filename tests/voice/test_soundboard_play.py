"""Playing a soundboard sound (OpenAPI: playSound): SOUNDBOARD_PLAY reaches the participants of the caller's voice
room only, needs USE_SOUNDBOARD there and the caller in a voice room of the guild, refuses interface sounds, and
takes the `sounds.play` bucket (3 per 10 seconds)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert

from meadhall.core.text import norm
from meadhall.db.schema import sounds
from tests.support.guilds import override
from tests.support.http import assert_error, denied, invalid, not_found
from tests.support.personas import hall
from tests.support.voice import join, voice_room


async def add_sound(rt: Any, guild_id: str, name: str, kind: str = "soundboard") -> str:
    sound_id = rt.ids.next()
    async with rt.engine.begin() as conn:
        await conn.execute(insert(sounds).values(
            id=sound_id, guild_id=int(guild_id), kind=kind, name=name, name_norm=norm(name), emoji=None,
            palette_event="message" if kind == "interface" else None, file_id=rt.ids.next(), duration_ms=900,
            creator_id=None, created_at=rt.clock.now()))
    return str(sound_id)


def play(api: Any, account: Any, guild_id: str, sound_id: str) -> Any:
    return api.request("POST", f"/guilds/{guild_id}/sounds/{sound_id}/play", account, expect=None)


async def test_the_sound_reaches_only_the_participants_of_that_room(api, client, accounts, rt, standin,
                                                                   capture_events):
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    other = await voice_room(client, h.owner, h.id, "Other")
    horn = await add_sound(rt, h.id, "horn")
    await join(api, h.a, lounge)
    await join(api, h.b, lounge)
    await join(api, h.owner, other)
    await capture_events.reset()

    r = await play(api, h.a, h.id, horn)
    assert r.status_code == 204, r.text
    await capture_events.settle()
    [ev] = capture_events.of_type("SOUNDBOARD_PLAY")
    assert set(ev.users) == {int(h.a.id), int(h.b.id)}
    assert (ev.data["guild_id"], ev.data["channel_id"], ev.data["user_id"]) == (h.id, lounge, h.a.id)
    assert ev.data["sound"]["id"] == horn and ev.data["sound"]["name"] == "horn"


async def test_refusals_and_the_rate(api, client, accounts, rt, standin, clock):
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    horn = await add_sound(rt, h.id, "horn")
    chime = await add_sound(rt, h.id, "chime", kind="interface")

    assert_error(await play(api, h.a, h.id, horn), 409, "voice.not_connected")
    await join(api, h.a, lounge)
    not_found(await play(api, h.a, h.id, "123"), "sound.not_found")
    invalid(await play(api, h.a, h.id, chime), "sound_id")
    clock.advance(10)  # refusals take the bucket too
    not_found(await play(api, h.outsider, h.id, horn), "guild.not_found")
    await override(client, h.owner, lounge, h.a.id, "member", deny="USE_SOUNDBOARD")
    denied(await play(api, h.a, h.id, horn), "USE_SOUNDBOARD")
    await override(client, h.owner, lounge, h.a.id, "member")

    await join(api, h.b, lounge)
    for _ in range(3):
        assert (await play(api, h.b, h.id, horn)).status_code == 204
    r = await play(api, h.b, h.id, horn)
    assert_error(r, 429, "rate_limited")
    assert r.json()["error"]["bucket"] == "sounds.play"

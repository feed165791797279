"""Sounds (OpenAPI: createSound, listSounds, updateSound, deleteSound; docs/customisation.md): type by magic
bytes confirmed by mutagen, size, counts per kind, names per kind, palette events, permissions, audit,
events, the file's removal, and the lookup the soundboard's play route uses."""

from __future__ import annotations

import pytest

from meadhall.core.errors import AppError
from meadhall.guilds.sounds.service import soundboard_sound
from tests.support.customisation import fill_sounds, mp3, upload_sound, wav, webm
from tests.support.factories import audit_rows
from tests.support.files import png, stored
from tests.support.guilds import give, make_guild, make_role
from tests.support.http import Api, error
from tests.support.personas import hall

SOUND_FIELDS = {"id", "guild_id", "name", "emoji", "kind", "palette_event", "file_id", "duration_ms", "creator_id",
                "created_at"}


async def test_upload_list_by_kind_and_the_sound_object(client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    await capture_events.reset()
    horn = await upload_sound(client, h.owner, h.id, "Air horn", emoji="📯", data=wav(1.5))
    assert set(horn) == SOUND_FIELDS
    assert (horn["kind"], horn["palette_event"], horn["emoji"], horn["duration_ms"]) == ("soundboard", None, "📯", 1500)
    ping = await upload_sound(client, h.owner, h.id, "Ping", "interface", palette_event="mention",
                              data=mp3(), content_type="audio/mpeg")
    assert ping["palette_event"] == "mention" and 1000 <= ping["duration_ms"] <= 1100
    api = Api(client)
    assert (await api.get(f"/guilds/{h.id}/sounds", h.a))["sounds"] == [horn, ping]
    assert (await api.get(f"/guilds/{h.id}/sounds", h.a, params={"kind": "interface"}))["sounds"] == [ping]
    assert (await api.get(f"/guilds/{h.id}/sounds", h.a, params={"kind": "soundboard"}))["sounds"] == [horn]
    assert error(await api.request("GET", f"/guilds/{h.id}/sounds", h.a, params={"kind": "loud"},
                                   expect=None)) == (422, "validation.failed")
    assert error(await api.request("GET", f"/guilds/{h.id}/sounds", h.outsider, expect=None)) == (404, "guild.not_found")
    r = await client.get(f"/files/{horn['file_id']}", headers=h.b.headers)
    assert r.status_code == 200 and r.headers["content-type"] == "audio/wav"
    entries = await audit_rows(rt, h.id, "sound.create")
    assert [e["data"]["name"] for e in entries] == ["Air horn", "Ping"]
    await capture_events.settle()
    updates = capture_events.of_type("GUILD_SOUNDS_UPDATE")
    assert [len(e.data["sounds"]) for e in updates] == [1, 2]
    assert updates[-1].data == {"guild_id": h.id, "sounds": [horn, ping]}
    assert set(updates[-1].users) == {int(a.id) for a in (h.owner, h.a, h.b)}


async def test_the_type_is_decided_by_magic_bytes_and_mutagen(client, accounts, rt):
    h = await hall(client, accounts, rt)
    muffled = await upload_sound(client, h.owner, h.id, "Muffled", data=webm(), content_type="audio/webm")
    assert muffled["duration_ms"] is None  # WebM is recognised by its header; mutagen does not read it
    await upload_sound(client, h.owner, h.id, "Alias", data=wav(), content_type="audio/x-wav")
    refused = [
        (wav(), "audio/mpeg"),  # a WAV declared as MP3: the declared type must be the content's
        (mp3(), "audio/wav"),
        (b"RIFF\x10\x00\x00\x00WAVEjunkjunkjunk", "audio/wav"),  # the magic bytes alone are not enough
        (b"this is a text file", "audio/mpeg"),
        (png(), "image/png"),
        (wav(), "text/plain"),
        (b"\x1a\x45\xdf\xa3\x84\x42\x82\x81x" + b"\0" * 40, "audio/webm"),  # Matroska, not WebM
    ]
    for data, declared in refused:
        body = await upload_sound(client, h.owner, h.id, "Refused", data=data, content_type=declared, expect=415)
        assert body["error"]["code"] == "file.unsupported_type", declared


async def test_the_size_limit_is_the_sound_media_limit(client, accounts, rt):
    h = await hall(client, accounts, rt)
    body = await upload_sound(client, h.owner, h.id, "Long", data=wav(33.0), expect=413)  # 528 044 bytes
    assert body["error"]["code"] == "file.too_large"
    await upload_sound(client, h.owner, h.id, "Short", data=wav(30.0))  # 480 044 bytes


async def test_names_are_unique_per_kind_ignoring_case(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await upload_sound(client, h.owner, h.id, "Drum")
    body = await upload_sound(client, h.owner, h.id, "DRUM", expect=409)
    assert body["error"]["code"] == "sound.name_taken"
    await upload_sound(client, h.owner, h.id, "drum", "interface", palette_event="message")  # another kind
    for bad in ("x", "y" * 33, "   "):
        body = await upload_sound(client, h.owner, h.id, bad, expect=422)
        assert body["error"]["details"][0]["field"] == "name", bad
    body = await upload_sound(client, h.owner, h.id, "Odd", "loud", expect=422)
    assert body["error"]["details"][0]["field"] == "kind"


async def test_palette_event_rules(client, accounts, rt):
    h = await hall(client, accounts, rt)
    body = await upload_sound(client, h.owner, h.id, "Bell", "interface", expect=422)
    assert body["error"]["details"][0]["field"] == "palette_event"
    body = await upload_sound(client, h.owner, h.id, "Bell", "soundboard", palette_event="message", expect=422)
    assert body["error"]["details"][0]["field"] == "palette_event"
    body = await upload_sound(client, h.owner, h.id, "Bell", "interface", palette_event="sneeze", expect=422)
    assert body["error"]["details"][0]["field"] == "palette_event"
    bell = await upload_sound(client, h.owner, h.id, "Bell", "interface", palette_event="call_ring")
    body = await upload_sound(client, h.owner, h.id, "Chime", "interface", palette_event="call_ring", expect=409)
    assert body["error"]["code"] == "sound.palette_event_taken"
    chime = await upload_sound(client, h.owner, h.id, "Chime", "interface", palette_event="call_end")
    api = Api(client)
    r = await api.request("PATCH", f"/guilds/{h.id}/sounds/{chime['id']}", h.owner,
                          json={"palette_event": "call_ring"}, expect=None)
    assert error(r) == (409, "sound.palette_event_taken")
    moved = (await api.patch(f"/guilds/{h.id}/sounds/{bell['id']}", h.owner,
                             json={"palette_event": "voice_join", "emoji": "🔔"}))["sound"]
    assert (moved["palette_event"], moved["emoji"]) == ("voice_join", "🔔")
    (await api.patch(f"/guilds/{h.id}/sounds/{chime['id']}", h.owner, json={"palette_event": "call_ring"}))
    horn = await upload_sound(client, h.owner, h.id, "Horn")
    r = await api.request("PATCH", f"/guilds/{h.id}/sounds/{horn['id']}", h.owner,
                          json={"palette_event": "message"}, expect=None)
    assert error(r) == (422, "validation.failed")
    r = await api.request("PATCH", f"/guilds/{h.id}/sounds/{bell['id']}", h.owner, json={"palette_event": None},
                          expect=None)
    assert error(r) == (422, "validation.failed")
    [*_, entry] = await audit_rows(rt, h.id, "sound.update")
    assert entry["data"] == {"changes": {"palette_event": ["call_end", "call_ring"]}}


async def test_thirty_sounds_of_each_kind(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await fill_sounds(rt, h.id, "soundboard", 30)
    body = await upload_sound(client, h.owner, h.id, "One more", expect=409)
    assert body["error"]["code"] == "sound.limit_reached"
    await upload_sound(client, h.owner, h.id, "Other kind", "interface", palette_event="mute")
    await fill_sounds(rt, h.id, "interface", 29)
    body = await upload_sound(client, h.owner, h.id, "Too many", "interface", palette_event="unmute", expect=409)
    assert body["error"]["code"] == "sound.limit_reached"


async def test_managing_needs_manage_sounds(client, accounts, rt):
    h = await hall(client, accounts, rt)
    horn = await upload_sound(client, h.owner, h.id, "Horn")
    api = Api(client)
    body = await upload_sound(client, h.a, h.id, "Mine", expect=403)
    assert body["error"]["permission"] == "MANAGE_SOUNDS"
    r = await api.request("PATCH", f"/guilds/{h.id}/sounds/{horn['id']}", h.a, json={"name": "Mine"}, expect=None)
    assert error(r) == (403, "perm.denied")
    assert error(await api.request("DELETE", f"/guilds/{h.id}/sounds/{horn['id']}", h.a,
                                   expect=None)) == (403, "perm.denied")
    await upload_sound(client, h.outsider, h.id, "Theirs", expect=404)
    role = await make_role(client, h.owner, h.id, "dj", "MANAGE_SOUNDS")
    await give(client, h.owner, h.id, h.a, role["id"])
    await upload_sound(client, h.a, h.id, "Mine")
    renamed = (await api.patch(f"/guilds/{h.id}/sounds/{horn['id']}", h.a, json={"name": "Big horn"}))["sound"]
    assert renamed["name"] == "Big horn"
    r = await api.request("PATCH", f"/guilds/{h.id}/sounds/{horn['id']}", h.a, json={"name": "MINE"}, expect=None)
    assert error(r) == (409, "sound.name_taken")


async def test_delete_removes_the_file_and_announces(client, accounts, rt, settings, capture_events):
    h = await hall(client, accounts, rt)
    horn = await upload_sound(client, h.owner, h.id, "Horn")
    assert stored(settings, horn["file_id"]).exists()
    await capture_events.reset()
    api = Api(client)
    await api.delete(f"/guilds/{h.id}/sounds/{horn['id']}", h.owner)
    assert not stored(settings, horn["file_id"]).exists()
    [entry] = await audit_rows(rt, h.id, "sound.delete")
    assert str(entry["target_id"]) == horn["id"]
    await capture_events.settle()
    assert [e.data for e in capture_events.of_type("GUILD_SOUNDS_UPDATE")] == [{"guild_id": h.id, "sounds": []}]
    assert error(await api.request("DELETE", f"/guilds/{h.id}/sounds/{horn['id']}", h.owner,
                                   expect=None)) == (404, "sound.not_found")


async def test_the_soundboard_lookup_for_the_play_route(client, accounts, rt):
    h = await hall(client, accounts, rt)
    horn = await upload_sound(client, h.owner, h.id, "Horn")
    ping = await upload_sound(client, h.owner, h.id, "Ping", "interface", palette_event="message")
    other = await make_guild(client, h.owner, "Other")
    async with rt.read() as uow:
        assert (await soundboard_sound(uow.conn, int(h.id), horn["id"]))["name"] == "Horn"
        with pytest.raises(AppError) as refused:
            await soundboard_sound(uow.conn, int(h.id), ping["id"])
        assert refused.value.code == "validation.failed"
        with pytest.raises(AppError) as missing:
            await soundboard_sound(uow.conn, int(other["id"]), horn["id"])
        assert missing.value.code == "sound.not_found"

"""A sound's `emoji` (OpenAPI: createSound, updateSound; docs/customisation.md): one Unicode emoji, or the
`<:name:id>` token of a custom emoji of this server; another server's emoji, free text and several emojis are
refused with 422 on upload and on update alike."""

from __future__ import annotations

from tests.support.customisation import upload_emoji, upload_sound, wav
from tests.support.guilds import make_guild
from tests.support.http import Api, invalid
from tests.support.personas import hall

UNICODE = ["📯", "👍🏽", "🏳️‍🌈", "👨‍👩‍👧", "🇳🇴", "1️⃣", "❤️"]
FREE_TEXT = ["horn", "👍👍", "📯 horn", ":horn:", "<:horn>", "<:horn:abc>", "<a:horn:1>"]


async def test_one_unicode_emoji_or_a_custom_emoji_of_this_server(client, accounts, rt):
    h = await hall(client, accounts, rt)
    api = Api(client)
    for i, emoji in enumerate(UNICODE):
        assert (await upload_sound(client, h.owner, h.id, f"Sound {i}", emoji=emoji))["emoji"] == emoji
    horn = await upload_emoji(client, h.owner, h.id, "horn")
    sound = await upload_sound(client, h.owner, h.id, "Custom", emoji=horn["token"])
    assert sound["emoji"] == horn["token"] == f"<:horn:{horn['id']}>"
    # Matched by id: the token is stored with the emoji's name.
    renamed = await upload_sound(client, h.owner, h.id, "Renamed", emoji=f"<:old_name:{horn['id']}>")
    assert renamed["emoji"] == horn["token"]

    patched = await api.patch(f"/guilds/{h.id}/sounds/{sound['id']}", h.owner, json={"emoji": "🔔"})
    assert patched["sound"]["emoji"] == "🔔"
    patched = await api.patch(f"/guilds/{h.id}/sounds/{sound['id']}", h.owner, json={"emoji": horn["token"]})
    assert patched["sound"]["emoji"] == horn["token"]
    cleared = await api.patch(f"/guilds/{h.id}/sounds/{sound['id']}", h.owner, json={"emoji": None})
    assert cleared["sound"]["emoji"] is None


async def test_another_servers_emoji_and_free_text_are_refused(client, accounts, rt):
    h = await hall(client, accounts, rt)
    api = Api(client)
    elsewhere = await make_guild(client, h.owner, "Elsewhere")
    foreign = await upload_emoji(client, h.owner, elsewhere["id"], "foreign")
    sound = await upload_sound(client, h.owner, h.id, "Plain")

    for emoji in [foreign["token"], "<:ghost:123456789>", *FREE_TEXT]:
        r = await api.request("POST", f"/guilds/{h.id}/sounds", h.owner, expect=None,
                              data={"name": "Refused", "kind": "soundboard", "emoji": emoji},
                              files={"file": ("sound.wav", wav(), "audio/wav")})
        invalid(r, "emoji")
        r = await api.request("PATCH", f"/guilds/{h.id}/sounds/{sound['id']}", h.owner, json={"emoji": emoji},
                              expect=None)
        invalid(r, "emoji")
    sounds = (await api.get(f"/guilds/{h.id}/sounds", h.owner))["sounds"]
    assert [(s["name"], s["emoji"]) for s in sounds] == [("Plain", None)]


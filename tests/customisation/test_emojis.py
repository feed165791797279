"""Custom emojis (OpenAPI: createEmoji, listEmojis, updateEmoji, deleteEmoji; docs/customisation.md): type by
content, size, count and name rules, permissions, audit, events, the file's removal, and their use in
reactions (a guild's own emoji, another guild's with USE_EXTERNAL_EMOJIS, unknown ids)."""

from __future__ import annotations

from sqlalchemy import select

from meadhall.db.schema import emojis, files
from tests.support.customisation import fill_emojis, upload_emoji
from tests.support.factories import add_member, audit_rows
from tests.support.files import gif, jpeg, png, png_of_size, stored, webp
from tests.support.guilds import give, make_guild, make_role, set_default_permissions
from tests.support.http import API, Api, error
from tests.support.messages import post, react
from tests.support.personas import hall

EMOJI_FIELDS = {"id", "guild_id", "name", "file_id", "token", "animated", "creator_id", "created_at"}


async def test_upload_list_and_the_emoji_object(client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    await capture_events.reset()
    emoji = await upload_emoji(client, h.owner, h.id, "party_parrot")
    assert set(emoji) == EMOJI_FIELDS
    assert emoji["guild_id"] == h.id and emoji["name"] == "party_parrot" and emoji["animated"] is False
    assert emoji["token"] == f"<:party_parrot:{emoji['id']}>" and emoji["creator_id"] == h.owner.id
    listed = await Api(client).get(f"/guilds/{h.id}/emojis", h.a)
    assert listed == {"emojis": [emoji]}
    # The image is served like an avatar to any signed-in user.
    r = await client.get(f"/files/{emoji['file_id']}", headers=h.outsider.headers)
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    [entry] = await audit_rows(rt, h.id, "emoji.create")
    assert (entry["target_type"], str(entry["target_id"]), str(entry["actor_id"])) == ("emoji", emoji["id"], h.owner.id)
    await capture_events.settle()
    [ev] = capture_events.of_type("GUILD_EMOJIS_UPDATE")
    assert ev.data == {"guild_id": h.id, "emojis": [emoji]}
    assert set(ev.users) == {int(a.id) for a in (h.owner, h.a, h.b)}


async def test_outsiders_see_no_emojis(client, accounts, rt):
    h = await hall(client, accounts, rt)
    emoji = await upload_emoji(client, h.owner, h.id, "secret")
    api = Api(client)
    assert error(await api.request("GET", f"/guilds/{h.id}/emojis", h.outsider, expect=None)) == (404, "guild.not_found")
    await upload_emoji(client, h.outsider, h.id, "mine", expect=404)
    r = await api.request("PATCH", f"/guilds/{h.id}/emojis/{emoji['id']}", h.outsider, json={"name": "x_y"}, expect=None)
    assert error(r) == (404, "guild.not_found")
    assert error(await api.request("DELETE", f"/guilds/{h.id}/emojis/{emoji['id']}", h.outsider,
                                   expect=None)) == (404, "guild.not_found")


async def test_the_type_is_decided_by_the_content(client, accounts, rt):
    h = await hall(client, accounts, rt)
    # The file name says nothing: a PNG named .gif, declared as PNG, is a PNG (not animated).
    renamed = await upload_emoji(client, h.owner, h.id, "renamed", filename="looks.gif")
    assert renamed["animated"] is False
    assert (await upload_emoji(client, h.owner, h.id, "dancing", data=gif(3), content_type="image/gif"))["animated"]
    assert (await upload_emoji(client, h.owner, h.id, "still_gif", data=gif(1), content_type="image/gif"))["animated"]
    assert not (await upload_emoji(client, h.owner, h.id, "photo", data=jpeg(), content_type="image/jpeg"))["animated"]
    assert not (await upload_emoji(client, h.owner, h.id, "leaf", data=webp(), content_type="image/webp"))["animated"]
    # A declared type the content does not match, a text file declared as an image, a type not allowed.
    for data, declared in ((png(), "image/gif"), (b"just some text, not an image", "image/png"),
                           (b"plain text", "text/plain"), (png(), "image/bmp")):
        body = await upload_emoji(client, h.owner, h.id, "refused", data=data, content_type=declared, expect=415)
        assert body["error"]["code"] == "file.unsupported_type", declared
    async with rt.engine.connect() as conn:
        names = sorted((await conn.execute(select(emojis.c.name))).scalars())
    assert names == ["dancing", "leaf", "photo", "renamed", "still_gif"]


async def test_the_size_limit_is_the_emoji_media_limit(client, accounts, rt):
    h = await hall(client, accounts, rt)
    body = await upload_emoji(client, h.owner, h.id, "too_big", data=png_of_size(524_289), expect=413)
    assert body["error"]["code"] == "file.too_large"
    await upload_emoji(client, h.owner, h.id, "fits", data=png_of_size(200_000))


async def test_names_follow_the_rule_and_are_unique_ignoring_case(client, accounts, rt):
    h = await hall(client, accounts, rt)
    for bad in ("a", "has space", "x" * 33, "émoji", ""):
        body = await upload_emoji(client, h.owner, h.id, bad, expect=422)
        assert body["error"]["code"] == "validation.failed" and body["error"]["details"][0]["field"] == "name", bad
    body = await upload_emoji(client, h.owner, h.id, None, expect=422)
    assert body["error"]["details"][0]["field"] == "name"
    first = await upload_emoji(client, h.owner, h.id, "Shield")
    body = await upload_emoji(client, h.owner, h.id, "sHIELD", expect=409)
    assert body["error"]["code"] == "emoji.name_taken"
    other = await upload_emoji(client, h.owner, h.id, "sword")
    api = Api(client)
    r = await api.request("PATCH", f"/guilds/{h.id}/emojis/{other['id']}", h.owner, json={"name": "SHIELD"}, expect=None)
    assert error(r) == (409, "emoji.name_taken")
    r = await api.request("PATCH", f"/guilds/{h.id}/emojis/{other['id']}", h.owner, json={"name": "no way"}, expect=None)
    assert error(r) == (422, "validation.failed")
    # Renaming to another case of its own name is allowed.
    renamed = (await api.patch(f"/guilds/{h.id}/emojis/{first['id']}", h.owner, json={"name": "SHIELD"}))["emoji"]
    assert renamed["name"] == "SHIELD" and renamed["token"] == f"<:SHIELD:{first['id']}>"
    [entry] = await audit_rows(rt, h.id, "emoji.update")
    assert entry["data"] == {"changes": {"name": ["Shield", "SHIELD"]}}
    # Another guild may use the same name.
    elsewhere = await make_guild(client, h.a, "Elsewhere")
    await upload_emoji(client, h.a, elsewhere["id"], "shield")


async def test_a_guild_holds_at_most_100_emojis(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await fill_emojis(rt, h.id, 99)
    await upload_emoji(client, h.owner, h.id, "hundredth")
    body = await upload_emoji(client, h.owner, h.id, "one_too_many", expect=409)
    assert body["error"]["code"] == "emoji.limit_reached"
    async with rt.engine.connect() as conn:
        assert len((await conn.execute(select(emojis.c.id).where(emojis.c.guild_id == int(h.id)))).all()) == 100


async def test_managing_needs_manage_emojis(client, accounts, rt):
    h = await hall(client, accounts, rt)
    emoji = await upload_emoji(client, h.owner, h.id, "owned")
    api = Api(client)
    body = await upload_emoji(client, h.a, h.id, "mine", expect=403)
    assert body["error"] == {**body["error"], "code": "perm.denied", "permission": "MANAGE_EMOJIS"}
    r = await api.request("PATCH", f"/guilds/{h.id}/emojis/{emoji['id']}", h.a, json={"name": "taken"}, expect=None)
    assert error(r) == (403, "perm.denied")
    assert error(await api.request("DELETE", f"/guilds/{h.id}/emojis/{emoji['id']}", h.a,
                                   expect=None)) == (403, "perm.denied")
    role = await make_role(client, h.owner, h.id, "artists", "MANAGE_EMOJIS")
    await give(client, h.owner, h.id, h.a, role["id"])
    await upload_emoji(client, h.a, h.id, "mine")
    await api.patch(f"/guilds/{h.id}/emojis/{emoji['id']}", h.a, json={"name": "renamed"})
    await api.delete(f"/guilds/{h.id}/emojis/{emoji['id']}", h.a)


async def test_delete_removes_the_row_and_the_file(client, accounts, rt, settings, capture_events):
    h = await hall(client, accounts, rt)
    keep = await upload_emoji(client, h.owner, h.id, "keep")
    gone = await upload_emoji(client, h.owner, h.id, "gone")
    assert stored(settings, gone["file_id"]).exists()
    await capture_events.reset()
    api = Api(client)
    await api.delete(f"/guilds/{h.id}/emojis/{gone['id']}", h.owner)
    assert not stored(settings, gone["file_id"]).exists()
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(files.c.id).where(files.c.id == int(gone["file_id"])))).first() is None
    assert stored(settings, keep["file_id"]).exists()
    [entry] = await audit_rows(rt, h.id, "emoji.delete")
    assert str(entry["target_id"]) == gone["id"] and entry["data"] == {"name": "gone"}
    await capture_events.settle()
    [ev] = capture_events.of_type("GUILD_EMOJIS_UPDATE")
    assert ev.data == {"guild_id": h.id, "emojis": [keep]}
    r = await api.request("DELETE", f"/guilds/{h.id}/emojis/{gone['id']}", h.owner, expect=None)
    assert error(r) == (404, "emoji.not_found")
    r = await api.request("PATCH", f"/guilds/{h.id}/emojis/{gone['id']}", h.owner, json={"name": "back"}, expect=None)
    assert error(r) == (404, "emoji.not_found")
    # An emoji id of another guild is not found through this one.
    other = await make_guild(client, h.owner, "Other")
    r = await api.request("DELETE", f"/guilds/{other['id']}/emojis/{keep['id']}", h.owner, expect=None)
    assert error(r) == (404, "emoji.not_found")


async def test_deleting_the_guild_removes_its_emoji_files(client, accounts, rt, settings):
    h = await hall(client, accounts, rt)
    emoji = await upload_emoji(client, h.owner, h.id, "doomed")
    r = await client.delete(f"{API}/guilds/{h.id}", headers=h.owner.headers)
    assert r.status_code == 204, r.text
    assert not stored(settings, emoji["file_id"]).exists()


async def test_reactions_with_custom_emojis(client, accounts, rt):
    h = await hall(client, accounts, rt)
    mine = await upload_emoji(client, h.owner, h.id, "home_made")
    message = await post(client, h.a, h.general)
    await react(client, h.a, h.general, message["id"], mine["token"])
    await react(client, h.b, h.general, message["id"], f"any_name:{mine['id']}")  # matched by id
    r = await client.get(f"{API}/channels/{h.general}/messages/{message['id']}", headers=h.a.headers)
    [reaction] = r.json()["message"]["reactions"]
    assert reaction["emoji"] == mine["token"] and reaction["count"] == 2
    # Unknown ids are refused.
    r = await react(client, h.a, h.general, message["id"], "<:ghost:123456789>", expect=422)
    assert r.json()["error"]["code"] == "reaction.invalid_emoji"
    # Another guild's emoji: its members may use it here with USE_EXTERNAL_EMOJIS, others may not.
    other = await make_guild(client, h.b, "Other")
    foreign = await upload_emoji(client, h.b, other["id"], "foreign")
    await react(client, h.b, h.general, message["id"], foreign["token"])
    r = await react(client, h.a, h.general, message["id"], foreign["token"], expect=403)
    assert r.json()["error"]["code"] == "perm.denied"
    await add_member(rt, other["id"], h.a)
    await react(client, h.a, h.general, message["id"], foreign["token"])
    await set_default_permissions(client, h.owner, h.id, "VIEW_CHANNEL|SEND_MESSAGES|READ_MESSAGE_HISTORY|ADD_REACTIONS")
    late = await post(client, h.a, h.general)
    r = await react(client, h.a, h.general, late["id"], foreign["token"], expect=403)
    assert r.json()["error"]["permission"] == "USE_EXTERNAL_EMOJIS"
    await react(client, h.a, h.general, late["id"], mine["token"])  # the guild's own needs nothing more

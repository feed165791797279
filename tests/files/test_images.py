"""Image slots (OpenAPI: setAvatar, setGuildIcon, setRoomBackground, setInviteBackground; docs/reference/limits.md): avatar, guild icon / banner / splash, room background and
invitation background. Who may set them, limits, types, the old file gone after a replacement, events and
audit, and who may fetch the images."""

from __future__ import annotations

import pytest
from sqlalchemy import insert, select

from meadhall.core import permissions as perms
from meadhall.db.schema import audit_log, files, instance_settings
from tests.support.factories import update_default_permissions
from tests.support.files import (
    bomb_png,
    fetch,
    gif,
    jpeg,
    png,
    png_of_size,
    real_bomb_png,
    stored,
    upload,
    webp,
)
from tests.support.guilds import make_invite, room
from tests.support.http import API, error
from tests.support.personas import hall

P = perms.P
MIB = 1024 * 1024


async def rows(rt) -> list[dict]:
    async with rt.engine.connect() as conn:
        return [dict(r) for r in (await conn.execute(select(files).order_by(files.c.id))).mappings()]


async def set_avatar(client, account, data=None, name="me.png", ctype="image/png"):
    return await upload(client, account, "/users/@me/avatar", png() if data is None else data, name, ctype)


async def actions(rt, action):
    async with rt.engine.connect() as conn:
        stmt = select(audit_log).where(audit_log.c.action == action).order_by(audit_log.c.id)
        return [dict(r) for r in (await conn.execute(stmt)).mappings()]


# ---- avatar ---------------------------------------------------------------------------------------


async def test_avatar_set_replace_and_remove(client, accounts, rt, settings, capture_events):
    a = await accounts.register("alice")
    stranger = await accounts.register("stranger")
    r = await set_avatar(client, a)
    assert r.status_code == 200, r.text
    first = r.json()["user"]["avatar"]
    assert first is not None and r.json()["user"]["id"] == a.id
    [row] = await rows(rt)
    assert (row["purpose"], row["owner"], row["owner_id"], row["uploader_id"]) == (
        "avatar", "user.avatar", int(a.id), int(a.id))
    # Any signed-in user may fetch an avatar; without a session nobody.
    got = await fetch(client, stranger, first)
    assert got.status_code == 200 and got.headers["content-type"] == "image/png"
    assert error(await fetch(client, None, first)) == (401, "auth.unauthorized")
    summary = (await client.get(f"{API}/users/{a.id}", headers=stranger.headers)).json()["user"]
    assert summary["avatar"] == first
    await capture_events.settle()
    assert [e.users for e in capture_events.of_type("USER_UPDATE")] == [(int(a.id),)]

    r = await set_avatar(client, a, jpeg(), "me.jpg", "image/jpeg")
    second = r.json()["user"]["avatar"]
    assert second != first
    assert not stored(settings, first).exists() and stored(settings, second).exists()
    assert error(await fetch(client, a, first)) == (404, "file.not_found")
    assert [row["id"] for row in await rows(rt)] == [int(second)]

    r = await client.delete(f"{API}/users/@me/avatar", headers=a.headers)
    assert r.status_code == 200 and r.json()["user"]["avatar"] is None
    assert await rows(rt) == [] and not stored(settings, second).exists()
    # Removing nothing is harmless.
    r = await client.delete(f"{API}/users/@me/avatar", headers=a.headers)
    assert r.status_code == 200 and r.json()["user"]["avatar"] is None


async def test_avatar_change_reaches_guild_members(client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    await capture_events.reset()
    assert (await set_avatar(client, h.a)).status_code == 200
    await capture_events.settle()
    [update] = capture_events.of_type("MEMBER_UPDATE")
    assert update.data["user"]["id"] == h.a.id and update.data["user"]["avatar"] is not None
    assert set(update.users) == {int(h.owner.id), int(h.a.id), int(h.b.id)}


async def test_avatar_formats(client, accounts, rt):
    a = await accounts.register("alice")
    for data, ctype in ((png(), "image/png"), (jpeg(), "image/jpeg"), (webp(), "image/webp"),
                        (gif(5), "image/gif"), (png(), "image/x-png"), (jpeg(), "image/jpg")):
        r = await set_avatar(client, a, data, "x", ctype)
        assert r.status_code == 200, (ctype, r.text)
    refused = [
        (b"plain text, not an image", "image/png"),
        (png(), "image/jpeg"),
        (png(), "application/octet-stream"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>", "image/svg+xml"),
        (png() + b"PK\x03\x04" + b"\0" * 30, "image/png"),
        (jpeg() + b"<script>alert(1)</script>", "image/jpeg"),
        (gif() + b"/*polyglot*/", "image/gif"),
        (png()[:-30], "image/png"),
        (bomb_png(), "image/png"),
        (real_bomb_png(), "image/png"),
        (gif(501, 4, 4), "image/gif"),
    ]
    for data, ctype in refused:
        r = await set_avatar(client, a, data, "x", ctype)
        assert error(r) == (415, "file.unsupported_type"), (ctype, len(data), r.text)
    # The refused uploads left nothing behind; the last accepted avatar is still in place.
    assert len(await rows(rt)) == 1


async def test_avatar_limit_is_8_mib_by_default(client, accounts, rt, settings):
    a = await accounts.register("alice")
    r = await set_avatar(client, a, png_of_size(8 * MIB))
    assert r.status_code == 200, r.text
    r = await set_avatar(client, a, png_of_size(8 * MIB + 1))
    assert error(r) == (413, "file.too_large")
    assert len(await rows(rt)) == 1
    assert list((settings.DATA_DIR / "files" / "tmp").iterdir()) == []


async def set_media_limits(rt, clock, **limits):
    async with rt.engine.begin() as conn:
        await conn.execute(insert(instance_settings).values(id=1, data={"media_limits": limits},
                                                            updated_at=clock.now()))


async def test_media_limits_come_from_instance_settings(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    await set_media_limits(rt, clock, avatar_max_bytes=4096, guild_image_max_bytes=2048)
    assert (await set_avatar(client, h.a, png_of_size(4096))).status_code == 200
    assert error(await set_avatar(client, h.a, png_of_size(4097))) == (413, "file.too_large")
    r = await upload(client, h.owner, f"/guilds/{h.id}/banner", png_of_size(2048))
    assert r.status_code == 200, r.text
    r = await upload(client, h.owner, f"/guilds/{h.id}/banner", png_of_size(2049))
    assert error(r) == (413, "file.too_large")
    meta = (await client.get(f"{API}/meta")).json()["limits"]
    assert meta["avatar_max_bytes"] == 4096 and meta["guild_image_max_bytes"] == 2048


# ---- guild icon, banner, splash ---------------------------------------------------------------------


@pytest.mark.parametrize("kind, purpose", [("icon", "avatar"), ("banner", "banner"), ("splash", "banner")])
async def test_guild_images(client, accounts, rt, settings, capture_events, kind, purpose):
    h = await hall(client, accounts, rt)
    field = f"{kind}_file_id"
    await capture_events.reset()
    r = await upload(client, h.owner, f"/guilds/{h.id}/{kind}", png())
    assert r.status_code == 200, r.text
    first = r.json()["guild"][field]
    assert first is not None
    [row] = await rows(rt)
    assert (row["purpose"], row["owner"], row["guild_id"]) == (purpose, f"guild.{kind}", int(h.id))
    await capture_events.settle()
    [update] = capture_events.of_type("GUILD_UPDATE")
    assert update.data[field] == first and set(update.users) == {int(h.owner.id), int(h.a.id), int(h.b.id)}
    [entry] = await actions(rt, "guild.update")
    assert entry["data"]["changes"] == {field: [None, first]}
    # Served to any signed-in user, members or not.
    assert (await fetch(client, h.outsider, first)).status_code == 200

    second = (await upload(client, h.owner, f"/guilds/{h.id}/{kind}", webp(), "x.webp", "image/webp")
              ).json()["guild"][field]
    assert not stored(settings, first).exists()
    assert [x["id"] for x in await rows(rt)] == [int(second)]
    r = await client.delete(f"{API}/guilds/{h.id}/{kind}", headers=h.owner.headers)
    assert r.status_code == 200 and r.json()["guild"][field] is None
    assert await rows(rt) == [] and not stored(settings, second).exists()
    assert len(await actions(rt, "guild.update")) == 3


async def test_guild_images_need_manage_guild(client, accounts, rt):
    h = await hall(client, accounts, rt)
    r = await upload(client, h.a, f"/guilds/{h.id}/icon", png())
    assert error(r) == (403, "perm.denied") and r.json()["error"]["permission"] == "MANAGE_GUILD"
    r = await client.delete(f"{API}/guilds/{h.id}/icon", headers=h.a.headers)
    assert error(r) == (403, "perm.denied")
    assert error(await upload(client, h.outsider, f"/guilds/{h.id}/icon", png())) == (404, "guild.not_found")
    assert error(await upload(client, h.owner, "/guilds/999/icon", png())) == (404, "guild.not_found")
    await update_default_permissions(rt, h.id, int(perms.DEFAULT | P.MANAGE_GUILD))
    assert (await upload(client, h.a, f"/guilds/{h.id}/splash", png())).status_code == 200


# ---- room background ------------------------------------------------------------------------------------


async def test_room_background(client, accounts, rt, settings, capture_events):
    h = await hall(client, accounts, rt)
    hidden = await room(client, h.owner, h.id, name="hidden",
                        permission_overrides=[{"id": h.id, "type": "role", "deny": "VIEW_CHANNEL"}])
    await capture_events.reset()
    r = await upload(client, h.owner, f"/channels/{h.general}/background", jpeg(), "bg.jpg", "image/jpeg")
    assert r.status_code == 200, r.text
    first = r.json()["channel"]["background_file_id"]
    await capture_events.settle()
    [update] = capture_events.of_type("CHANNEL_UPDATE")
    assert update.data["background_file_id"] == first
    assert set(update.users) == {int(h.owner.id), int(h.a.id), int(h.b.id)}
    [entry] = await actions(rt, "channel.background_update")
    assert entry["target_id"] == int(h.general)
    assert (await fetch(client, h.outsider, first)).status_code == 200  # banners: any signed-in user

    second = (await upload(client, h.owner, f"/channels/{h.general}/background", png())).json()["channel"][
        "background_file_id"]
    assert not stored(settings, first).exists() and stored(settings, second).exists()
    r = await client.delete(f"{API}/channels/{h.general}/background", headers=h.owner.headers)
    assert r.status_code == 200 and r.json()["channel"]["background_file_id"] is None
    assert not stored(settings, second).exists() and await rows(rt) == []
    # Only to those who may view the hidden room.
    await capture_events.reset()
    await upload(client, h.owner, f"/channels/{hidden['id']}/background", png())
    await capture_events.settle()
    assert [set(e.users) for e in capture_events.of_type("CHANNEL_UPDATE")] == [{int(h.owner.id)}]


async def test_room_background_refusals(client, accounts, rt):
    h = await hall(client, accounts, rt)
    r = await upload(client, h.a, f"/channels/{h.general}/background", png())
    assert error(r) == (403, "perm.denied") and r.json()["error"]["permission"] == "MANAGE_CHANNEL_BACKGROUND"
    assert error(await client.delete(f"{API}/channels/{h.general}/background", headers=h.a.headers)) == (
        403, "perm.denied")
    assert error(await upload(client, h.outsider, f"/channels/{h.general}/background", png())) == (
        404, "channel.not_found")
    category = await room(client, h.owner, h.id, name="cat", type="category")
    assert error(await upload(client, h.owner, f"/channels/{category['id']}/background", png())) == (
        422, "channel.wrong_type")
    assert error(await client.delete(f"{API}/channels/{category['id']}/background", headers=h.owner.headers)) == (
        422, "channel.wrong_type")
    voice = await room(client, h.owner, h.id, name="voice", type="voice")
    assert (await upload(client, h.owner, f"/channels/{voice['id']}/background", png())).status_code == 200
    assert error(await upload(client, h.owner, f"/channels/{h.general}/background", b"GIF89a nope", "x.gif",
                              "image/gif")) == (415, "file.unsupported_type")


# ---- invitation background --------------------------------------------------------------------------


async def test_invite_background_by_its_creator_or_manage_guild(client, accounts, rt, settings):
    h = await hall(client, accounts, rt)
    invite = await make_invite(client, h.a, h.general)
    code = invite["code"]
    r = await upload(client, h.a, f"/invites/{code}/background", png())
    assert r.status_code == 200, r.text
    first = r.json()["invite"]["background_file_id"]
    assert r.json()["invite"]["code"] == code and r.json()["invite"]["inviter"]["id"] == h.a.id
    preview = (await client.get(f"{API}/invites/{code}")).json()
    assert preview["invite"]["background_file_id"] == first
    [entry] = await actions(rt, "invite.background_update")
    assert entry["data"]["code"] == code and entry["target_id"] is None
    # Another member without MANAGE_GUILD may not; the owner may (and replaces it).
    r = await upload(client, h.b, f"/invites/{code}/background", png())
    assert error(r) == (403, "perm.denied") and r.json()["error"]["permission"] == "MANAGE_GUILD"
    assert error(await upload(client, h.outsider, f"/invites/{code}/background", png())) == (403, "perm.denied")
    r = await upload(client, h.owner, f"/invites/{code}/background", gif(), "bg.gif", "image/gif")
    assert r.status_code == 200, r.text
    second = r.json()["invite"]["background_file_id"]
    assert not stored(settings, first).exists()
    assert error(await upload(client, h.a, "/invites/zzzzzzzz/background", png())) == (404, "invite.not_found")
    r = await client.delete(f"{API}/invites/{code}/background", headers=h.a.headers)
    assert r.status_code == 200 and r.json()["invite"]["background_file_id"] is None
    assert not stored(settings, second).exists() and await rows(rt) == []
    assert len(await actions(rt, "invite.background_update")) == 3


async def test_deleting_an_invite_deletes_its_background(client, accounts, rt, settings):
    h = await hall(client, accounts, rt)
    invite = await make_invite(client, h.a, h.general)
    background = (await upload(client, h.a, f"/invites/{invite['code']}/background", png())).json()["invite"][
        "background_file_id"]
    assert (await client.delete(f"{API}/invites/{invite['code']}", headers=h.a.headers)).status_code == 204
    assert await rows(rt) == [] and not stored(settings, background).exists()


async def test_slot_uploads_need_a_session_and_a_file(client, accounts, rt):
    h = await hall(client, accounts, rt)
    r = await client.post(f"{API}/users/@me/avatar", files={"file": ("a.png", png(), "image/png")})
    assert error(r) == (401, "auth.unauthorized")
    r = await client.post(f"{API}/users/@me/avatar", files={"avatar": ("a.png", png(), "image/png")},
                          headers=h.a.headers)
    assert error(r) == (422, "validation.failed") and r.json()["error"]["details"][0]["field"] == "file"
    r = await client.post(f"{API}/guilds/{h.id}/icon", json={}, headers=h.owner.headers)
    assert error(r) == (422, "validation.failed")

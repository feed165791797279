"""The cosmetics gallery (OpenAPI: createCosmetic, listCosmetics, updateCosmetic, deleteCosmetic;
docs/customisation.md) and role cosmetics: MANAGE_ROLES, image checks, size, count, audit, events,
roles losing a deleted item (ROLE_UPDATE), and role create/update validating against the gallery."""

from __future__ import annotations

from sqlalchemy import delete, select

from meadhall.db.schema import cosmetics, emojis, files, sounds
from meadhall.files.cleanup import orphan_files
from tests.support.customisation import fill_cosmetics, upload_cosmetic, upload_emoji, upload_sound
from tests.support.factories import audit_rows
from tests.support.files import gif, png_of_size, stored
from tests.support.guilds import make_guild, make_role
from tests.support.http import Api, error
from tests.support.personas import hall

COSMETIC_FIELDS = {"id", "guild_id", "kind", "name", "file_id", "created_at"}


async def test_upload_list_by_kind_and_purposes(client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    await capture_events.reset()
    frame = await upload_cosmetic(client, h.owner, h.id, "Golden frame", "frame")
    icon = await upload_cosmetic(client, h.owner, h.id, "Crown", "icon", data=gif(2), content_type="image/gif")
    assert set(frame) == COSMETIC_FIELDS and (frame["kind"], frame["name"]) == ("frame", "Golden frame")
    api = Api(client)
    assert (await api.get(f"/guilds/{h.id}/cosmetics", h.a))["cosmetics"] == [frame, icon]
    assert (await api.get(f"/guilds/{h.id}/cosmetics", h.a, params={"kind": "icon"}))["cosmetics"] == [icon]
    assert error(await api.request("GET", f"/guilds/{h.id}/cosmetics", h.outsider,
                                   expect=None)) == (404, "guild.not_found")
    async with rt.engine.connect() as conn:
        purposes = dict((await conn.execute(select(files.c.id, files.c.purpose).where(
            files.c.id.in_([int(frame["file_id"]), int(icon["file_id"])])))).all())
    assert purposes == {int(frame["file_id"]): "banner", int(icon["file_id"]): "avatar"}
    assert [e["data"]["kind"] for e in await audit_rows(rt, h.id, "cosmetic.create")] == ["frame", "icon"]
    await capture_events.settle()
    [_, last] = capture_events.of_type("GUILD_COSMETICS_UPDATE")
    assert last.data == {"guild_id": h.id, "cosmetics": [frame, icon]}
    assert set(last.users) == {int(a.id) for a in (h.owner, h.a, h.b)}


async def test_refusals(client, accounts, rt):
    h = await hall(client, accounts, rt)
    body = await upload_cosmetic(client, h.a, h.id, "Mine", expect=403)
    assert body["error"]["permission"] == "MANAGE_ROLES"
    await upload_cosmetic(client, h.outsider, h.id, "Theirs", expect=404)
    body = await upload_cosmetic(client, h.owner, h.id, "Huge", data=png_of_size(1_048_577), expect=413)
    assert body["error"]["code"] == "file.too_large"
    await upload_cosmetic(client, h.owner, h.id, "Large", data=png_of_size(900_000))
    body = await upload_cosmetic(client, h.owner, h.id, "Text", data=b"not an image", expect=415)
    assert body["error"]["code"] == "file.unsupported_type"
    body = await upload_cosmetic(client, h.owner, h.id, "Odd", "badge", expect=422)
    assert body["error"]["details"][0]["field"] == "kind"
    body = await upload_cosmetic(client, h.owner, h.id, "n" * 33, expect=422)
    assert body["error"]["details"][0]["field"] == "name"
    await fill_cosmetics(rt, h.id, 99)
    body = await upload_cosmetic(client, h.owner, h.id, "Over", expect=409)
    assert body["error"]["code"] == "cosmetic.limit_reached"


async def test_rename_and_permissions(client, accounts, rt):
    h = await hall(client, accounts, rt)
    frame = await upload_cosmetic(client, h.owner, h.id, "Frame")
    api = Api(client)
    url = f"/guilds/{h.id}/cosmetics/{frame['id']}"
    assert error(await api.request("PATCH", url, h.a, json={"name": "Mine"}, expect=None)) == (403, "perm.denied")
    assert error(await api.request("DELETE", url, h.a, expect=None)) == (403, "perm.denied")
    renamed = (await api.patch(url, h.owner, json={"name": "Silver frame"}))["cosmetic"]
    assert renamed["name"] == "Silver frame"
    [entry] = await audit_rows(rt, h.id, "cosmetic.update")
    assert entry["data"] == {"changes": {"name": ["Frame", "Silver frame"]}}
    other = await make_guild(client, h.owner, "Other")
    r = await api.request("PATCH", f"/guilds/{other['id']}/cosmetics/{frame['id']}", h.owner, json={"name": "x"},
                          expect=None)
    assert error(r) == (404, "cosmetic.not_found")


async def test_roles_take_gallery_items_of_their_kind_and_guild(client, accounts, rt):
    h = await hall(client, accounts, rt)
    frame = await upload_cosmetic(client, h.owner, h.id, "Frame", "frame")
    icon = await upload_cosmetic(client, h.owner, h.id, "Icon", "icon")
    role = await make_role(client, h.owner, h.id, "shiny", frame_id=frame["id"], icon_id=icon["id"])
    assert (role["frame_id"], role["icon_id"]) == (frame["id"], icon["id"])
    body = await make_role(client, h.owner, h.id, "wrong", frame_id=icon["id"], expect=404)
    assert body["error"]["code"] == "cosmetic.not_found"
    body = await make_role(client, h.owner, h.id, "unknown", icon_id="12345", expect=404)
    assert body["error"]["code"] == "cosmetic.not_found"
    other = await make_guild(client, h.owner, "Other")
    foreign = await upload_cosmetic(client, h.owner, other["id"], "Foreign", "frame")
    api = Api(client)
    r = await api.request("PATCH", f"/guilds/{h.id}/roles/{role['id']}", h.owner, json={"frame_id": foreign["id"]},
                          expect=None)
    assert error(r) == (404, "cosmetic.not_found")
    cleared = (await api.patch(f"/guilds/{h.id}/roles/{role['id']}", h.owner, json={"icon_id": None}))["role"]
    assert (cleared["frame_id"], cleared["icon_id"]) == (frame["id"], None)


async def test_delete_clears_roles_and_removes_the_file(client, accounts, rt, settings, capture_events):
    h = await hall(client, accounts, rt)
    frame = await upload_cosmetic(client, h.owner, h.id, "Frame", "frame")
    icon = await upload_cosmetic(client, h.owner, h.id, "Icon", "icon")
    shown = await make_role(client, h.owner, h.id, "shown", frame_id=frame["id"], icon_id=icon["id"])
    plain = await make_role(client, h.owner, h.id, "plain", icon_id=icon["id"])
    await capture_events.reset()
    api = Api(client)
    await api.delete(f"/guilds/{h.id}/cosmetics/{frame['id']}", h.owner)
    assert not stored(settings, frame["file_id"]).exists() and stored(settings, icon["file_id"]).exists()
    roles = {r["id"]: r for r in (await api.get(f"/guilds/{h.id}/roles", h.a))["roles"]}
    assert (roles[shown["id"]]["frame_id"], roles[shown["id"]]["icon_id"]) == (None, icon["id"])
    assert roles[plain["id"]]["icon_id"] == icon["id"]
    await capture_events.settle()
    updates = capture_events.of_type("ROLE_UPDATE")
    assert [e.data for e in updates] == [roles[shown["id"]]]
    assert set(updates[0].users) == {int(a.id) for a in (h.owner, h.a, h.b)}
    assert [e.data for e in capture_events.of_type("GUILD_COSMETICS_UPDATE")] == [
        {"guild_id": h.id, "cosmetics": [icon]}]
    [entry] = await audit_rows(rt, h.id, "cosmetic.delete")
    assert entry["data"]["roles"] == [shown["id"]]
    r = await api.request("DELETE", f"/guilds/{h.id}/cosmetics/{frame['id']}", h.owner, expect=None)
    assert error(r) == (404, "cosmetic.not_found")


async def test_maintenance_finds_collection_files_whose_holder_went(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    kept = [await upload_emoji(client, h.owner, h.id, "kept"), await upload_sound(client, h.owner, h.id, "Kept"),
            await upload_cosmetic(client, h.owner, h.id, "Kept")]
    lost = [await upload_emoji(client, h.owner, h.id, "lost"), await upload_sound(client, h.owner, h.id, "Lost"),
            await upload_cosmetic(client, h.owner, h.id, "Lost")]
    async with rt.engine.begin() as conn:  # removed behind the service's back: their files stay
        for table, item in zip((emojis, sounds, cosmetics), lost, strict=True):
            await conn.execute(delete(table).where(table.c.id == int(item["id"])))
    clock.advance(hours=25)
    found = {f["id"] for f in (await orphan_files(rt))["files"]}
    assert found == {item["file_id"] for item in lost}
    assert not found & {item["file_id"] for item in kept}

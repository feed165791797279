"""Attachments bound to messages (OpenAPI: sendMessage, getMessage; docs/files.md): only the uploader's own unsent uploads to the
same room; who may fetch them once sent; deletion with the message, the room and the guild."""

from __future__ import annotations

from sqlalchemy import delete

from meadhall.core import permissions as perms
from meadhall.db.schema import channels, files
from tests.support.factories import file_ids, insert_role
from tests.support.files import attach, attached, fetch, png, stored
from tests.support.guilds import room
from tests.support.http import API, error
from tests.support.messages import post, send, url
from tests.support.personas import hall

P = perms.P


async def test_send_binds_attachments_in_the_order_given(client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    first = await attached(client, h.a, h.general, png(), "one.png", "image/png")
    second = await attached(client, h.a, h.general, b"two", "two.txt")
    await capture_events.reset()
    message = await post(client, h.a, h.general, "look", attachment_ids=[second["id"], first["id"]])
    assert message["attachment_ids"] == [second["id"], first["id"]]
    assert [f["id"] for f in message["attachments"]] == [second["id"], first["id"]]
    assert all(f["bound"] for f in message["attachments"])
    assert message["attachments"][1]["metadata"] == {"width": 16, "height": 16}
    await capture_events.settle()
    [created] = capture_events.of_type("MESSAGE_CREATE")
    assert created.data["attachment_ids"] == [second["id"], first["id"]]
    # History and the single message carry them too.
    r = await client.get(url(h.general), headers=h.b.headers)
    page = {m["id"]: m for m in r.json()["messages"]}
    assert page[message["id"]]["attachments"] == message["attachments"]
    r = await client.get(url(h.general, f"/{message['id']}"), headers=h.b.headers)
    assert r.json()["message"]["attachment_ids"] == [second["id"], first["id"]]


async def test_a_message_of_attachments_only(client, accounts, rt):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general)
    message = await post(client, h.a, h.general, "", attachment_ids=[f["id"]])
    assert message["content"] == "" and message["attachment_ids"] == [f["id"]]
    # Editing it to empty text is allowed while it holds attachments.
    r = await client.patch(url(h.general, f"/{message['id']}"), json={"content": "  "}, headers=h.a.headers)
    assert r.status_code == 200, r.text
    plain = await post(client, h.a, h.general, "text")
    r = await client.patch(url(h.general, f"/{plain['id']}"), json={"content": ""}, headers=h.a.headers)
    assert error(r) == (422, "validation.failed")


async def test_only_the_uploaders_own_unsent_uploads_to_this_room(client, accounts, rt):
    h = await hall(client, accounts, rt)
    other_room = await room(client, h.owner, h.id, name="other")
    mine = await attached(client, h.a, h.general)
    theirs = await attached(client, h.b, h.general)
    elsewhere = await attached(client, h.a, other_room["id"])
    avatar = (await client.post(f"{API}/users/@me/avatar", files={"file": ("a.png", png(), "image/png")},
                                headers=h.a.headers)).json()["user"]["avatar"]
    sent = await attached(client, h.a, h.general)
    await post(client, h.a, h.general, "first", attachment_ids=[sent["id"]])
    for ids in ([theirs["id"]], [elsewhere["id"]], [sent["id"]], [avatar], ["123456789"], ["x1"],
                [mine["id"], mine["id"]], [mine["id"], theirs["id"]]):
        r = await send(client, h.a, h.general, "again", attachment_ids=ids)
        assert error(r) == (422, "validation.failed"), ids
        assert r.json()["error"]["details"][0]["field"].startswith("attachment_ids")
    # Nothing was bound by the refused sends; the upload still works for its owner.
    message = await post(client, h.a, h.general, "ok", attachment_ids=[mine["id"]])
    assert message["attachment_ids"] == [mine["id"]]
    r = await send(client, h.b, h.general, "eleven", attachment_ids=[str(i) for i in range(11)])
    assert error(r) == (422, "validation.failed")


async def test_attaching_needs_attach_files(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general)
    # Deny ATTACH_FILES to alice in the room after her upload.
    r = await client.put(f"{API}/channels/{h.general}/permissions/{h.a.id}",
                         json={"type": "member", "deny": "ATTACH_FILES"}, headers=h.owner.headers)
    assert r.status_code == 204, r.text
    r = await send(client, h.a, h.general, "x", attachment_ids=[f["id"]])
    assert error(r) == (403, "perm.denied") and r.json()["error"]["permission"] == "ATTACH_FILES"


async def test_sent_attachments_follow_the_room(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    secret = await room(client, h.owner, h.id, name="secret")
    f = await attached(client, h.a, secret["id"], b"plans")
    message = await post(client, h.a, secret["id"], "plans", attachment_ids=[f["id"]])
    for viewer in (h.a, h.b, h.owner):
        r = await fetch(client, viewer, f["id"])
        assert (r.status_code, r.content) == (200, b"plans")
    assert error(await fetch(client, h.outsider, f["id"])) == (404, "file.not_found")
    # Bob loses the room: the attachment is gone for him too.
    r = await client.put(f"{API}/channels/{secret['id']}/permissions/{h.b.id}",
                         json={"type": "member", "deny": "VIEW_CHANNEL"}, headers=h.owner.headers)
    assert r.status_code == 204
    assert error(await fetch(client, h.b, f["id"])) == (404, "file.not_found")
    assert error(await client.get(f"{API}/files/{f['id']}", headers=h.b.headers)) == (404, "file.not_found")
    # Without READ_MESSAGE_HISTORY the room is visible but its messages (and files) are not.
    r = await client.put(f"{API}/channels/{secret['id']}/permissions/{h.b.id}",
                         json={"type": "member", "deny": "READ_MESSAGE_HISTORY"}, headers=h.owner.headers)
    assert r.status_code == 204
    assert error(await fetch(client, h.b, f["id"])) == (404, "file.not_found")
    assert message["id"]


async def test_attachments_of_private_messages_reach_their_two_parties_only(client, accounts, rt):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general, b"for bob")
    await post(client, h.a, h.general, f"/ls <@{h.b.id}> a secret", attachment_ids=[f["id"]])
    assert (await fetch(client, h.a, f["id"])).status_code == 200
    assert (await fetch(client, h.b, f["id"])).status_code == 200
    # Not even the owner (an instance administrator neither, docs/reference/permissions.md).
    assert error(await fetch(client, h.owner, f["id"])) == (404, "file.not_found")


async def test_deleting_the_message_deletes_its_files(client, accounts, rt, settings):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general)
    keep = await attached(client, h.a, h.general)
    message = await post(client, h.a, h.general, "x", attachment_ids=[f["id"]])
    assert stored(settings, f["id"]).exists()
    r = await client.delete(url(h.general, f"/{message['id']}"), headers=h.a.headers)
    assert r.status_code == 204
    assert not stored(settings, f["id"]).exists()
    assert await file_ids(rt) == [int(keep["id"])]
    assert error(await fetch(client, h.a, f["id"])) == (404, "file.not_found")


async def test_deleting_a_room_or_a_guild_deletes_their_files(client, accounts, rt, settings):
    h = await hall(client, accounts, rt)
    talk = await room(client, h.owner, h.id, name="talk")
    sent = await attached(client, h.a, talk["id"])
    unsent = await attached(client, h.a, talk["id"])
    await post(client, h.a, talk["id"], "x", attachment_ids=[sent["id"]])
    r = await client.post(f"{API}/channels/{talk['id']}/background", files={"file": ("b.png", png(), "image/png")},
                          headers=h.owner.headers)
    background = r.json()["channel"]["background_file_id"]
    elsewhere = await attached(client, h.a, h.general)
    assert (await client.delete(f"{API}/channels/{talk['id']}", headers=h.owner.headers)).status_code == 204
    for gone in (sent["id"], unsent["id"], background):
        assert not stored(settings, gone).exists()
    assert await file_ids(rt) == [int(elsewhere["id"])]

    r = await client.post(f"{API}/guilds/{h.id}/icon", files={"file": ("i.png", png(), "image/png")},
                          headers=h.owner.headers)
    icon = r.json()["guild"]["icon_file_id"]
    await client.post(f"{API}/auth/step-up", json={"password": "correct horse battery staple"},
                      headers=h.owner.headers)
    r = await client.delete(f"{API}/guilds/{h.id}", headers=h.owner.headers)
    assert r.status_code == 204, r.text
    assert await file_ids(rt) == []
    assert not stored(settings, elsewhere["id"]).exists() and not stored(settings, icon).exists()


async def test_two_sends_racing_for_one_upload_bind_it_once(client, accounts, rt):
    import asyncio

    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general)
    answers = await asyncio.gather(*(send(client, h.a, h.general, f"m{i}", attachment_ids=[f["id"]])
                                     for i in range(3)))
    assert sorted(r.status_code for r in answers) == [201, 422, 422]


async def test_a_dangling_attachment_is_not_served(client, accounts, rt):
    """A message removed behind the service's back (a cascade): its files are served to nobody."""
    h = await hall(client, accounts, rt)
    talk = await room(client, h.owner, h.id, name="talk")
    f = await attached(client, h.a, talk["id"])
    await post(client, h.a, talk["id"], "x", attachment_ids=[f["id"]])
    async with rt.engine.begin() as conn:
        await conn.execute(delete(channels).where(channels.c.id == int(talk["id"])))
    assert error(await fetch(client, h.a, f["id"])) == (404, "file.not_found")


async def test_upload_role_permission(client, accounts, rt, clock):
    """ATTACH_FILES granted by a role in a guild whose default role lacks it."""
    h = await hall(client, accounts, rt)
    from tests.support.factories import update_default_permissions

    await update_default_permissions(rt, h.id, int(perms.DEFAULT) & ~int(P.ATTACH_FILES))
    assert error(await attach(client, h.a, h.general)) == (403, "perm.denied")
    await insert_role(rt, clock, h.id, 777, int(P.ATTACH_FILES), 1, holders=[h.a])
    assert (await attach(client, h.a, h.general)).status_code == 201


async def test_metadata_follows_the_content_rule(client, accounts, rt):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general)
    assert error(await client.get(f"{API}/files/{f['id']}", headers=h.b.headers)) == (404, "file.not_found")
    await post(client, h.a, h.general, "x", attachment_ids=[f["id"]])
    r = await client.get(f"{API}/files/{f['id']}", headers=h.b.headers)
    assert r.status_code == 200 and r.json()["file"]["bound"] is True
    assert error(await client.get(f"{API}/files/{f['id']}", headers=h.outsider.headers)) == (404, "file.not_found")
    assert error(await client.get(f"{API}/files/{f['id']}")) == (401, "auth.unauthorized")


async def test_conversation_icons_are_served_to_participants_only(client, accounts, rt, clock, settings):
    """No conversation exists before the social issue, so nobody is a participant: the uploader, a
    stranger and an instance administrator all get 404."""
    from sqlalchemy import insert, update

    from meadhall.db.schema import users

    h = await hall(client, accounts, rt)
    async with rt.engine.begin() as conn:
        await conn.execute(insert(files).values(
            id=4242, purpose="dm_icon", uploader_id=int(h.a.id), original_name="icon.png", content_type="image/png",
            size=3, sha256="0" * 64, meta={}, owner="channel.icon", owner_id=99, created_at=clock.now()))
        await conn.execute(update(users).where(users.c.id == int(h.owner.id)).values(is_instance_admin=True))
    path = stored(settings, "4242")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"png")
    for account in (h.a, h.b, h.owner):
        assert error(await fetch(client, account, "4242")) == (404, "file.not_found")

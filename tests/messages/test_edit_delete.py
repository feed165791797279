"""PATCH and DELETE /channels/{id}/messages/{id} (OpenAPI: editMessage, deleteMessage; docs/reference/limits.md; docs/reference/events.md), through HTTP."""

from __future__ import annotations

from meadhall.core import permissions as perms
from meadhall.core.clock import iso
from tests.support.factories import audit_rows, channel_row, insert_role
from tests.support.guilds import override, room
from tests.support.http import denied, err, invalid, not_found
from tests.support.messages import events, history, ids, post, url
from tests.support.personas import hall

P = perms.P


async def edit(client, account, channel_id, message_id, content):
    return await client.patch(url(channel_id, f"/{message_id}"), json={"content": content}, headers=account.headers)


async def delete(client, account, channel_id, message_id):
    return await client.delete(url(channel_id, f"/{message_id}"), headers=account.headers)


# --- edit ---------------------------------------------------------------------------------------------------

async def test_author_edits_within_24_hours(client, accounts, rt, clock, capture_events):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    m = await post(client, h.a, h.general, f"first <@{h.owner.id}>", nonce="n")
    clock.advance(hours=1)
    await capture_events.reset()
    r = await edit(client, h.a, h.general, m["id"], "second")
    assert r.status_code == 200, r.text
    assert r.headers["X-RateLimit-Bucket"] == "messages.modify"
    edited = r.json()["message"]
    assert edited["content"] == "second" and edited["edited_at"] == iso(clock.now())
    assert edited["created_at"] == m["created_at"] and edited["id"] == m["id"]
    assert edited["kind"] == "normal" and edited["nonce"] == "n" and edited["author"]["id"] == h.a.id
    [ev] = await events(capture_events, "MESSAGE_UPDATE")
    assert ev.users == ids(h.owner, h.a)
    assert ev.data == edited
    r = await client.get(url(h.general, f"/{m['id']}"), headers=h.owner.headers)
    assert r.json()["message"] == edited


async def test_edit_window_ends_after_24_hours(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, "v1")
    clock.advance(hours=24)
    assert (await edit(client, h.a, h.general, m["id"], "v2")).status_code == 200
    clock.advance(seconds=1)
    r = await edit(client, h.a, h.general, m["id"], "v3")
    assert r.status_code == 403 and err(r)["code"] == "message.edit_window_expired"
    assert (await client.get(url(h.general, f"/{m['id']}"), headers=h.a.headers)).json()["message"]["content"] == "v2"
    # Deleting has no window.
    assert (await delete(client, h.a, h.general, m["id"])).status_code == 204


async def test_edit_window_expired_after_24_hours_and_a_second(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, "v1")
    clock.advance(hours=24, seconds=1)
    r = await edit(client, h.a, h.general, m["id"], "v2")
    assert r.status_code == 403 and err(r)["code"] == "message.edit_window_expired"


async def test_others_need_manage_messages_to_edit(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, "mine")
    denied(await edit(client, h.b, h.general, m["id"], "yours now"), "MANAGE_MESSAGES")
    await insert_role(rt, clock, h.id, 7001, P.MANAGE_MESSAGES, 1, holders=[h.b])
    r = await edit(client, h.b, h.general, m["id"], "moderated")
    assert r.status_code == 200 and r.json()["message"]["content"] == "moderated"
    assert r.json()["message"]["author"]["id"] == h.a.id
    assert (await edit(client, h.owner, h.general, m["id"], "by the owner")).status_code == 200
    # The window applies to moderators too.
    clock.advance(hours=24, seconds=1)
    r = await edit(client, h.b, h.general, m["id"], "late")
    assert r.status_code == 403 and err(r)["code"] == "message.edit_window_expired"


async def test_manage_messages_denied_in_the_room(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    await insert_role(rt, clock, h.id, 7002, P.MANAGE_MESSAGES, 1, holders=[h.b])
    await override(client, h.owner, h.general, "7002", "role", deny="MANAGE_MESSAGES")
    m = await post(client, h.a, h.general, "mine")
    denied(await edit(client, h.b, h.general, m["id"], "x"), "MANAGE_MESSAGES")
    denied(await delete(client, h.b, h.general, m["id"]), "MANAGE_MESSAGES")


async def test_system_messages_cannot_be_edited(client, accounts, rt):
    h = await hall(client, accounts, rt)
    system = (await history(client, h.owner, h.general))["messages"][-1]
    assert system["kind"] == "system"
    denied(await edit(client, h.owner, h.general, system["id"], "rewritten"), None)


async def test_edit_content_rules(client, accounts, rt):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, "v1")
    for content in ("", "   ", "\n\t"):
        invalid(await edit(client, h.a, h.general, m["id"], content), "content")
    invalid(await edit(client, h.a, h.general, m["id"], "x" * 4001), "content")
    r = await client.patch(url(h.general, f"/{m['id']}"), json={}, headers=h.a.headers)
    invalid(r, "content")
    assert (await edit(client, h.a, h.general, m["id"], "y" * 4000)).status_code == 200
    r = await client.get(url(h.general, f"/{m['id']}"), headers=h.a.headers)
    assert r.json()["message"]["content"] == "y" * 4000


async def test_edit_keeps_the_kind_and_parses_no_command(client, accounts, rt):
    h = await hall(client, accounts, rt)
    action = await post(client, h.a, h.general, "/me waves")
    r = await edit(client, h.a, h.general, action["id"], "/scream NOW")
    assert r.status_code == 200
    assert (r.json()["message"]["kind"], r.json()["message"]["content"]) == ("action", "/scream NOW")
    plain = await post(client, h.a, h.general, "plain")
    r = await edit(client, h.a, h.general, plain["id"], "/me is not parsed")
    assert (r.json()["message"]["kind"], r.json()["message"]["content"]) == ("normal", "/me is not parsed")
    r = await edit(client, h.a, h.general, plain["id"], f"/ls <@{h.b.id}> nope")
    assert r.json()["message"]["kind"] == "normal" and r.json()["message"]["recipient_id"] is None
    r = await edit(client, h.a, h.general, plain["id"], "//kept")
    assert r.json()["message"]["content"] == "//kept"


async def test_edit_refusals_for_unknown_messages_and_rooms(client, accounts, rt):
    h = await hall(client, accounts, rt)
    other = await room(client, h.owner, h.id, name="other")
    m = await post(client, h.a, h.general, "v1")
    not_found(await edit(client, h.a, h.general, "123456789", "x"), "message.not_found")
    not_found(await edit(client, h.a, h.general, "nope", "x"), "message.not_found")
    not_found(await edit(client, h.a, other["id"], m["id"], "x"), "message.not_found")
    not_found(await edit(client, h.outsider, h.general, m["id"], "x"), "channel.not_found")
    await override(client, h.owner, h.general, h.a.id, "member", deny="VIEW_CHANNEL")
    not_found(await edit(client, h.a, h.general, m["id"], "x"), "channel.not_found")


# --- delete -------------------------------------------------------------------------------------------------

async def test_author_deletes_without_audit(client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    m = await post(client, h.a, h.general, "bye")
    await capture_events.reset()
    r = await delete(client, h.a, h.general, m["id"])
    assert r.status_code == 204 and r.content == b""
    assert r.headers["X-RateLimit-Bucket"] == "messages.modify"
    [ev] = await events(capture_events, "MESSAGE_DELETE")
    assert ev.data == {"id": m["id"], "channel_id": h.general, "guild_id": h.id}
    assert ev.users == ids(h.owner, h.a)
    assert await audit_rows(rt, h.id, "message.delete") == []
    not_found(await client.get(url(h.general, f"/{m['id']}"), headers=h.a.headers), "message.not_found")
    not_found(await delete(client, h.a, h.general, m["id"]), "message.not_found")
    not_found(await edit(client, h.a, h.general, m["id"], "x"), "message.not_found")
    assert m["id"] not in [x["id"] for x in (await history(client, h.a, h.general))["messages"]]


async def test_others_need_manage_messages_to_delete_and_are_audited(client, accounts, rt, clock, capture_events):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, "spam")
    denied(await delete(client, h.b, h.general, m["id"]), "MANAGE_MESSAGES")
    assert (await client.get(url(h.general, f"/{m['id']}"), headers=h.a.headers)).status_code == 200
    await insert_role(rt, clock, h.id, 7003, P.MANAGE_MESSAGES, 1, holders=[h.b])
    clock.advance(hours=48)  # any age
    await capture_events.reset()
    assert (await delete(client, h.b, h.general, m["id"])).status_code == 204
    [ev] = await events(capture_events, "MESSAGE_DELETE")
    assert ev.users == ids(h.owner, h.a, h.b)
    [entry] = await audit_rows(rt, h.id, "message.delete")
    assert entry["actor_id"] == int(h.b.id)
    assert (entry["target_type"], entry["target_id"]) == ("message", int(m["id"]))
    assert entry["guild_id"] == int(h.id)
    assert entry["data"]["channel_id"] == h.general and entry["data"]["author_id"] == h.a.id


async def test_owner_deletes_a_system_message_audited(client, accounts, rt):
    h = await hall(client, accounts, rt)
    system = (await history(client, h.owner, h.general))["messages"][0]
    assert system["kind"] == "system"
    denied(await delete(client, h.a, h.general, system["id"]), "MANAGE_MESSAGES")
    assert (await delete(client, h.owner, h.general, system["id"])).status_code == 204
    [entry] = await audit_rows(rt, h.id, "message.delete")
    assert entry["target_id"] == int(system["id"]) and entry["data"]["author_id"] is None


async def test_delete_moves_last_message_id_back(client, accounts, rt):
    h = await hall(client, accounts, rt)
    first = await post(client, h.a, h.general, "one")
    second = await post(client, h.b, h.general, "two")
    assert (await delete(client, h.a, h.general, first["id"])).status_code == 204
    assert (await channel_row(rt, h.general))["last_message_id"] == int(second["id"])
    assert (await delete(client, h.b, h.general, second["id"])).status_code == 204
    row = await channel_row(rt, h.general)
    newest = (await history(client, h.a, h.general))["messages"][0]
    assert row["last_message_id"] == int(newest["id"]) and newest["kind"] == "system"
    # A room emptied of every message has none.
    for m in (await history(client, h.owner, h.general))["messages"]:
        assert (await delete(client, h.owner, h.general, m["id"])).status_code == 204
    assert (await channel_row(rt, h.general))["last_message_id"] is None
    r = await client.get(f"/api/v1/channels/{h.general}", headers=h.a.headers)
    assert r.json()["channel"]["last_message_id"] is None


async def test_delete_refusals_for_unknown_messages_and_rooms(client, accounts, rt):
    h = await hall(client, accounts, rt)
    other = await room(client, h.owner, h.id, name="other")
    m = await post(client, h.a, h.general, "v1")
    not_found(await delete(client, h.a, h.general, "123456789"), "message.not_found")
    not_found(await delete(client, h.a, h.general, "x1"), "message.not_found")
    not_found(await delete(client, h.owner, other["id"], m["id"]), "message.not_found")
    not_found(await delete(client, h.outsider, h.general, m["id"]), "channel.not_found")

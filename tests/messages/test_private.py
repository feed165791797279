"""Private (`/ls`) messages: visible only to author and recipient everywhere (OpenAPI: sendMessage; docs/reference/errors.md; docs/reference/permissions.md; docs/reference/events.md)."""

from __future__ import annotations

from tests.support.factories import channel_row, make_admin
from tests.support.http import invalid, not_found
from tests.support.messages import events, history, ids, post, url
from tests.support.personas import hall


def room_url(h):
    return f"/api/v1/channels/{h.general}"


async def setup_private(client, accounts, rt):
    h = await hall(client, accounts, rt)
    public = await post(client, h.owner, h.general, "public")
    private = await post(client, h.a, h.general, f"/ls <@{h.b.id}> secret")
    return h, public, private


async def test_history_shows_private_messages_only_to_their_two_parties(client, accounts, rt):
    h, public, private = await setup_private(client, accounts, rt)
    for viewer in (h.a, h.b):
        listed = [m["id"] for m in (await history(client, viewer, h.general))["messages"]]
        assert listed[:2] == [private["id"], public["id"]]
    listed = [m["id"] for m in (await history(client, h.owner, h.general))["messages"]]
    assert private["id"] not in listed and listed[0] == public["id"]
    # Cursors do not reveal it either.
    page = await history(client, h.owner, h.general, after=public["id"])
    assert page == {"messages": [], "has_more": False}


async def test_get_single_private_message(client, accounts, rt):
    h, _, private = await setup_private(client, accounts, rt)
    for viewer in (h.a, h.b):
        r = await client.get(url(h.general, f"/{private['id']}"), headers=viewer.headers)
        assert r.status_code == 200 and r.json()["message"] == private
    # The owner holds every permission, yet a private message of others does not exist for them.
    not_found(await client.get(url(h.general, f"/{private['id']}"), headers=h.owner.headers), "message.not_found")


async def test_instance_admin_does_not_see_private_messages_of_others(client, accounts, rt):
    h, public, private = await setup_private(client, accounts, rt)
    await make_admin(rt, h.outsider)
    listed = [m["id"] for m in (await history(client, h.outsider, h.general))["messages"]]
    assert public["id"] in listed and private["id"] not in listed
    not_found(await client.get(url(h.general, f"/{private['id']}"), headers=h.outsider.headers),
              "message.not_found")
    r = await client.delete(url(h.general, f"/{private['id']}"), headers=h.outsider.headers)
    not_found(r, "message.not_found")


async def test_message_create_goes_to_exactly_the_two_parties(client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    await capture_events.reset()
    m = await post(client, h.a, h.general, f"/ls <@{h.b.id}> secret", nonce="p1")
    [ev] = await events(capture_events, "MESSAGE_CREATE")
    assert ev.users == ids(h.a, h.b)
    assert ev.data == m and ev.data["nonce"] == "p1"


async def test_private_messages_do_not_move_last_message_id(client, accounts, rt):
    h, public, private = await setup_private(client, accounts, rt)
    assert (await channel_row(rt, h.general))["last_message_id"] == int(public["id"])
    r = await client.get(room_url(h), headers=h.b.headers)
    assert r.json()["channel"]["last_message_id"] == public["id"]
    # Deleting the newest public message moves it back past the private one.
    assert (await client.delete(url(h.general, f"/{public['id']}"), headers=h.owner.headers)).status_code == 204
    row = await channel_row(rt, h.general)
    assert row["last_message_id"] is not None and row["last_message_id"] < int(public["id"])
    assert row["last_message_id"] != int(private["id"])


async def test_edit_and_delete_of_private_messages_reach_only_the_parties(client, accounts, rt, capture_events):
    h, _, private = await setup_private(client, accounts, rt)
    await capture_events.reset()
    r = await client.patch(url(h.general, f"/{private['id']}"), json={"content": "still secret"},
                           headers=h.a.headers)
    assert r.status_code == 200, r.text
    edited = r.json()["message"]
    assert (edited["kind"], edited["recipient_id"], edited["content"]) == ("private", h.b.id, "still secret")
    [ev] = await events(capture_events, "MESSAGE_UPDATE")
    assert ev.users == ids(h.a, h.b)
    r = await client.delete(url(h.general, f"/{private['id']}"), headers=h.a.headers)
    assert r.status_code == 204
    [ev] = await events(capture_events, "MESSAGE_DELETE")
    assert ev.users == ids(h.a, h.b)
    assert ev.data == {"id": private["id"], "channel_id": h.general, "guild_id": h.id}


async def test_others_cannot_edit_or_delete_a_private_message_they_cannot_see(client, accounts, rt):
    h, _, private = await setup_private(client, accounts, rt)
    for who in (h.owner,):
        r = await client.patch(url(h.general, f"/{private['id']}"), json={"content": "x"}, headers=who.headers)
        not_found(r, "message.not_found")
        not_found(await client.delete(url(h.general, f"/{private['id']}"), headers=who.headers), "message.not_found")
    # The recipient sees it but is not its author and holds no MANAGE_MESSAGES.
    r = await client.patch(url(h.general, f"/{private['id']}"), json={"content": "x"}, headers=h.b.headers)
    assert r.status_code == 403 and r.json()["error"]["permission"] == "MANAGE_MESSAGES"


async def test_replies_to_private_messages(client, accounts, rt, capture_events):
    h, _, private = await setup_private(client, accounts, rt)
    # Someone who cannot see it cannot reply to it.
    r = await client.post(url(h.general), json={"content": "re", "reply_to_id": private["id"]},
                          headers=h.owner.headers)
    invalid(r, "reply_to_id")
    # The recipient may, privately: the reference is shown to the two parties.
    answer = await post(client, h.b, h.general, f"/ls <@{h.a.id}> got it", reply_to_id=private["id"])
    assert answer["referenced_message"]["content"] == "secret"
    # A public reply to a private message shows its reference only to the two parties: not in the
    # history of others, nor in the MESSAGE_CREATE they receive.
    await capture_events.reset()
    public_reply = await post(client, h.b, h.general, "answering in public", reply_to_id=private["id"])
    assert public_reply["referenced_message"]["content"] == "secret"
    owner_view = (await history(client, h.owner, h.general))["messages"][0]
    assert owner_view["id"] == public_reply["id"] and owner_view["referenced_message"] is None
    assert owner_view["reply_to_id"] == private["id"]
    created = await events(capture_events, "MESSAGE_CREATE")
    by_user = {u: e.data for e in created for u in e.users}
    assert set(by_user) == set(ids(h.owner, h.a, h.b))
    assert by_user[int(h.owner.id)]["referenced_message"] is None
    assert by_user[int(h.a.id)]["referenced_message"]["content"] == "secret"
    assert by_user[int(h.b.id)]["referenced_message"]["content"] == "secret"
    # The same holds for MESSAGE_UPDATE when that reply is edited.
    await capture_events.reset()
    r = await client.patch(url(h.general, f"/{public_reply['id']}"), json={"content": "edited"},
                           headers=h.b.headers)
    assert r.status_code == 200
    updated = await events(capture_events, "MESSAGE_UPDATE")
    by_user = {u: e.data for e in updated for u in e.users}
    assert set(by_user) == set(ids(h.owner, h.a, h.b))
    assert by_user[int(h.owner.id)]["referenced_message"] is None
    assert by_user[int(h.a.id)]["referenced_message"]["content"] == "secret"


async def test_ack_default_skips_private_messages_of_others(client, accounts, rt):
    h, public, private = await setup_private(client, accounts, rt)
    r = await client.post(f"{room_url(h)}/ack", headers=h.owner.headers)
    assert r.json()["read_state"]["last_read_message_id"] == public["id"]
    r = await client.post(f"{room_url(h)}/ack", headers=h.b.headers)
    assert r.json()["read_state"]["last_read_message_id"] == private["id"]
    r = await client.post(f"{room_url(h)}/ack", json={"message_id": private["id"]}, headers=h.owner.headers)
    not_found(r, "message.not_found")

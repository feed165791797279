"""Messages in conversations through the ordinary message routes (docs/social.md "Messages in conversations";
OpenAPI: sendMessage, listMessages, getMessage, editMessage, deleteMessage, addReaction, pinMessage,
sendTyping, ackChannel, searchMessages, uploadAttachment): participants hold a fixed set of permissions,
events reach the participants only, a block stops sending in a 1:1 but not reading, and every route
answers an outsider (an instance administrator too) 404."""

from __future__ import annotations

from urllib.parse import quote

from tests.support.conversations import add_recipient, group, open_dm
from tests.support.factories import make_admin
from tests.support.files import attach, attached, fetch, stored
from tests.support.http import API, assert_error, invalid
from tests.support.messages import (
    THUMBS,
    ack,
    delete_message,
    edit_message,
    events,
    history,
    ids,
    message_of,
    pin,
    post,
    react,
    reaction_url,
    send,
    start_typing,
    unpin,
    url,
)
from tests.support.social import block, remove_relationship


async def trio(api, accounts, rt):
    """A group of a (owner), b and c; `outsider` is an instance administrator outside it."""
    a, b, c, outsider = [await accounts.register(n) for n in ("alice", "bob", "carol", "outsider")]
    await make_admin(rt, outsider)
    conv = await group(api, a, b, c)
    return conv["id"], a, b, c, outsider


async def test_send_read_edit_delete_in_a_group(api, client, accounts, rt, capture_events):
    cid, a, b, c, outsider = await trio(api, accounts, rt)
    await capture_events.reset()
    m = await post(client, a, cid, f"hello <@{b.id}> @everyone", nonce="n1")
    assert m["guild_id"] is None and m["channel_id"] == cid and m["nonce"] == "n1"
    assert m["mentions"] == [b.id] and m["mention_everyone"] is False and m["suppress_embeds"] is False
    [ev] = await events(capture_events, "MESSAGE_CREATE")
    assert ev.users == ids(a, b, c)
    page = await history(client, c, cid)
    assert [x["id"] for x in page["messages"]] == [m["id"]]
    assert (await message_of(client, b, cid, m["id"]))["content"] == m["content"]
    # The author edits and deletes; another participant may do neither (no MANAGE_MESSAGES here).
    await edit_message(client, b, cid, m["id"], "no", expect=403)
    await delete_message(client, b, cid, m["id"], expect=403)
    await capture_events.reset()
    assert (await edit_message(client, a, cid, m["id"], "edited"))["content"] == "edited"
    [ev] = await events(capture_events, "MESSAGE_UPDATE")
    assert ev.users == ids(a, b, c)
    await capture_events.reset()
    await delete_message(client, a, cid, m["id"])
    [ev] = await events(capture_events, "MESSAGE_DELETE")
    assert ev.users == ids(a, b, c) and ev.data == {"id": m["id"], "channel_id": cid, "guild_id": None}


async def test_commands_keep_their_rules(api, client, accounts, rt, capture_events):
    cid, a, b, c, outsider = await trio(api, accounts, rt)
    for text, kind in (("/me waves", "action"), ("/whisper psst", "whisper"), ("/scream HEY", "scream")):
        assert (await post(client, b, cid, text))["kind"] == kind
    await capture_events.reset()
    private = await post(client, a, cid, f"/ls <@{b.id}> just you")
    assert private["kind"] == "private" and private["recipient_id"] == b.id
    [ev] = await events(capture_events, "MESSAGE_CREATE")
    assert ev.users == ids(a, b)
    assert private["id"] not in [x["id"] for x in (await history(client, c, cid))["messages"]]
    # The recipient must take part in the conversation; never oneself.
    invalid(await send(client, a, cid, f"/ls <@{outsider.id}> hi"), "content")
    invalid(await send(client, a, cid, f"/ls <@{a.id}> hi"), "content")


async def test_outsiders_get_404_on_every_message_route(api, client, accounts, rt):
    cid, a, b, c, outsider = await trio(api, accounts, rt)
    m = await post(client, a, cid, "hi")
    mid = m["id"]
    calls = [
        ("POST", f"/channels/{cid}/messages", {"json": {"content": "x"}}),
        ("GET", f"/channels/{cid}/messages", {}),
        ("GET", f"/channels/{cid}/messages/{mid}", {}),
        ("PATCH", f"/channels/{cid}/messages/{mid}", {"json": {"content": "x"}}),
        ("DELETE", f"/channels/{cid}/messages/{mid}", {}),
        ("GET", f"/channels/{cid}/messages/search", {"params": {"q": "hi"}}),
        ("PUT", f"/channels/{cid}/messages/{mid}/reactions/{quote(THUMBS)}", {}),
        ("DELETE", f"/channels/{cid}/messages/{mid}/reactions/{quote(THUMBS)}", {}),
        ("GET", f"/channels/{cid}/messages/{mid}/reactions/{quote(THUMBS)}", {}),
        ("GET", f"/channels/{cid}/pins", {}),
        ("PUT", f"/channels/{cid}/pins/{mid}", {}),
        ("DELETE", f"/channels/{cid}/pins/{mid}", {}),
        ("POST", f"/channels/{cid}/typing", {}),
        ("POST", f"/channels/{cid}/ack", {"json": {}}),
        ("GET", f"/channels/{cid}", {}),
    ]
    for method, path, kw in calls:
        r = await api.request(method, path, outsider, expect=None, **kw)
        assert_error(r, 404, "channel.not_found")
    assert_error(await attach(client, outsider, cid), 404, "channel.not_found")


async def test_reactions_pins_typing_read_marks_and_search(api, client, accounts, rt, capture_events):
    cid, a, b, c, outsider = await trio(api, accounts, rt)
    m = await post(client, a, cid, "findable words here")
    await capture_events.reset()
    await react(client, b, cid, m["id"])
    [ev] = await events(capture_events, "MESSAGE_REACTION_ADD")
    assert ev.users == ids(a, b, c) and ev.data["guild_id"] is None
    r = await client.get(reaction_url(cid, m["id"], THUMBS), headers=c.headers)
    assert [u["id"] for u in r.json()["users"]] == [b.id]
    # Removing another's reaction needs MANAGE_MESSAGES, which nobody holds in a conversation.
    r = await client.delete(reaction_url(cid, m["id"], THUMBS, b.id), headers=a.headers)
    assert_error(r, 403, "perm.denied")
    # Any participant pins.
    await capture_events.reset()
    await pin(client, c, cid, m["id"])
    [ev] = await events(capture_events, "CHANNEL_PINS_UPDATE")
    assert ev.users == ids(a, b, c)
    pins = (await api.get(f"/channels/{cid}/pins", b))["messages"]
    assert [p["id"] for p in pins] == [m["id"]]
    await unpin(client, b, cid, m["id"])
    await capture_events.reset()
    await start_typing(client, b, cid)
    [ev] = await events(capture_events, "TYPING_START")
    assert ev.users == ids(a, c)
    r = await ack(client, c, cid)
    assert r.status_code == 200 and r.json()["read_state"]["last_read_message_id"] == m["id"]
    states = (await api.get("/users/@me/read-states", c))["read_states"]
    assert [s["channel_id"] for s in states] == [cid]
    found = await api.get(f"/channels/{cid}/messages/search", b, params={"q": "word"})
    assert [x["id"] for x in found["messages"]] == [m["id"]]


async def test_attachments_are_served_to_participants_only(api, client, accounts, rt, settings):
    cid, a, b, c, outsider = await trio(api, accounts, rt)
    f = await attached(client, a, cid)
    assert (await fetch(client, b, f["id"])).status_code == 404  # unbound: the uploader's only
    m = await post(client, a, cid, "file", attachment_ids=[f["id"]])
    assert m["attachments"][0]["id"] == f["id"]
    for who in (a, b, c):
        assert (await fetch(client, who, f["id"])).status_code == 200
    assert (await fetch(client, outsider, f["id"])).status_code == 404
    assert (await client.get(f"{API}/files/{f['id']}", headers=outsider.headers)).status_code == 404
    await delete_message(client, a, cid, m["id"])
    assert not stored(settings, f["id"]).exists()


async def test_a_block_stops_sending_in_a_one_to_one_only(api, client, accounts, rt):
    a, b, c = [await accounts.register(n) for n in ("alice", "bob", "carol")]
    dm = (await open_dm(api, a, b))["id"]
    m = await post(client, a, dm, "before")
    await block(api, b, a)
    for who in (a, b):
        r = await send(client, who, dm, "after")
        assert_error(r, 403, "relationship.blocked")
    # History stays readable, reactions and read marks keep working.
    assert [x["id"] for x in (await history(client, a, dm))["messages"]] == [m["id"]]
    await react(client, b, dm, m["id"])
    assert (await ack(client, a, dm)).status_code == 200
    # A group of the two is unaffected.
    g = await group(api, c, a, b)
    await post(client, a, g["id"], "in the group")
    await remove_relationship(api, b, a)
    await post(client, a, dm, "unblocked")


async def test_a_member_added_later_reads_the_history(api, client, accounts, rt):
    a, b, c = [await accounts.register(n) for n in ("alice", "bob", "carol")]
    dm = await open_dm(api, a, b)
    m = await post(client, a, dm["id"], "old news")
    await add_recipient(api, a, dm, c)
    assert [x["id"] for x in (await history(client, c, dm["id"]))["messages"]] == [m["id"]]
    assert (await client.get(url(dm["id"]), headers=c.headers)).status_code == 200

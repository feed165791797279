"""POST /channels/{id}/messages (OpenAPI: sendMessage, getMessage; docs/reference/events.md), through HTTP. The helpers at the top are
shared by the other message test modules."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from meadhall.core import permissions as perms
from meadhall.core.clock import iso
from meadhall.db.schema import users
from tests.support.factories import (
    channel_row,
    insert_role,
    message_count,
    time_out,
    update_default_permissions,
)
from tests.support.guilds import make_guild, override, room
from tests.support.http import denied, err, invalid, not_found
from tests.support.messages import events, history, ids, post, send, url
from tests.support.personas import hall
from tests.support.shapes import MESSAGE_FIELDS

API = "/api/v1"
P = perms.P


# --- success and shape ----------------------------------------------------------------------------------------

async def test_send_answers_201_with_every_message_field(client, accounts, rt, clock, capture_events):
    h = await hall(client, accounts, rt)
    await capture_events.reset()
    r = await send(client, h.a, h.general, "Hello, hall")
    assert r.status_code == 201, r.text
    assert r.headers["X-RateLimit-Bucket"] == "messages.send"
    m = r.json()["message"]
    assert set(m) == MESSAGE_FIELDS
    assert m["channel_id"] == h.general and m["guild_id"] == h.id
    assert m["author"]["id"] == h.a.id and m["author"]["username"] == "alice"
    assert m["content"] == "Hello, hall" and m["kind"] == "normal"
    assert m["webhook"] is None and m["recipient_id"] is None and m["system_event"] is None
    assert m["attachment_ids"] == [] and m["attachments"] == []
    assert m["nonce"] is None and m["reply_to_id"] is None and m["referenced_message"] is None
    assert m["mentions"] == [] and m["mention_channels"] == []
    assert m["mention_everyone"] is False and m["suppress_embeds"] is False
    assert m["reactions"] == [] and m["pinned"] is False
    assert m["created_at"] == iso(clock.now()) and m["edited_at"] is None
    assert m["id"].isdigit()
    [ev] = await events(capture_events, "MESSAGE_CREATE")
    assert ev.data == m
    # The room's newest message moves forward, and GET /channels/{id} shows it.
    assert (await channel_row(rt, h.general))["last_message_id"] == int(m["id"])
    r = await client.get(f"{API}/channels/{h.general}", headers=h.b.headers)
    assert r.json()["channel"]["last_message_id"] == m["id"]
    # The message is stored once and is listed first.
    assert (await history(client, h.b, h.general))["messages"][0] == m


async def test_send_in_a_voice_room_carries_messages(client, accounts, rt):
    h = await hall(client, accounts, rt)
    voice = await room(client, h.owner, h.id, name="talk", type="voice")
    m = await post(client, h.a, voice["id"], "text in voice")
    assert m["channel_id"] == voice["id"]


async def test_content_length_in_code_points(client, accounts, rt):
    h = await hall(client, accounts, rt)
    assert (await post(client, h.a, h.general, "x" * 4000))["content"] == "x" * 4000
    assert (await post(client, h.a, h.general, "ж" * 4000))["content"] == "ж" * 4000
    assert (await post(client, h.a, h.general, "😀" * 4000))["content"] == "😀" * 4000
    before = await message_count(rt, h.general)
    invalid(await send(client, h.a, h.general, "x" * 4001), "content")
    assert await message_count(rt, h.general) == before


async def test_content_is_kept_as_typed(client, accounts, rt):
    h = await hall(client, accounts, rt)
    assert (await post(client, h.a, h.general, "  padded\n"))["content"] == "  padded\n"


async def test_empty_and_whitespace_only_content_are_refused(client, accounts, rt):
    h = await hall(client, accounts, rt)
    before = await message_count(rt, h.general)
    for content in ("", " ", "  \n\t "):
        invalid(await send(client, h.a, h.general, content), "content")
    r = await client.post(url(h.general), json={}, headers=h.a.headers)
    invalid(r, "content")
    r = await client.post(url(h.general), json={"content": 5}, headers=h.a.headers)
    invalid(r, "content")
    assert await message_count(rt, h.general) == before


async def test_kind_cannot_be_sent_by_clients(client, accounts, rt):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, "hi", kind="system", recipient_id=h.b.id)
    assert m["kind"] == "normal" and m["recipient_id"] is None and m["author"]["id"] == h.a.id


async def test_unauthenticated_send_is_401(client, accounts, rt):
    h = await hall(client, accounts, rt)
    r = await client.post(url(h.general), json={"content": "hi"})
    assert r.status_code == 401 and err(r)["code"] == "auth.unauthorized"


# --- nonce --------------------------------------------------------------------------------------------------

async def test_nonce_is_echoed_in_answer_and_event(client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    await capture_events.reset()
    m = await post(client, h.a, h.general, "hi", nonce="n" * 64)
    assert m["nonce"] == "n" * 64
    [ev] = await events(capture_events, "MESSAGE_CREATE")
    assert ev.data["nonce"] == "n" * 64
    invalid(await send(client, h.a, h.general, "hi", nonce="n" * 65), "nonce")


async def test_repeated_nonce_returns_the_first_message_within_five_minutes(client, accounts, rt, clock,
                                                                           capture_events):
    h = await hall(client, accounts, rt)
    first = await post(client, h.a, h.general, "first", nonce="abc")
    count = await message_count(rt, h.general)
    await capture_events.reset()
    clock.advance(299)
    r = await send(client, h.a, h.general, "second try", nonce="abc")
    assert r.status_code == 200, r.text
    assert r.json()["message"] == first
    assert await message_count(rt, h.general) == count
    assert await events(capture_events, "MESSAGE_CREATE") == []
    # After the window a new message is written.
    clock.advance(2)
    r = await send(client, h.a, h.general, "third", nonce="abc")
    assert r.status_code == 201 and r.json()["message"]["id"] != first["id"]
    assert r.json()["message"]["content"] == "third"
    assert await message_count(rt, h.general) == count + 1


async def test_nonce_after_301_seconds_is_a_new_message(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    first = await post(client, h.a, h.general, "first", nonce="abc")
    clock.advance(301)
    second = await post(client, h.a, h.general, "first", nonce="abc")
    assert second["id"] != first["id"]


async def test_nonce_is_scoped_to_author_and_room(client, accounts, rt):
    h = await hall(client, accounts, rt)
    other = await room(client, h.owner, h.id, name="other")
    first = await post(client, h.a, h.general, "mine", nonce="same")
    by_b = await post(client, h.b, h.general, "yours", nonce="same")
    elsewhere = await post(client, h.a, other["id"], "there", nonce="same")
    assert len({first["id"], by_b["id"], elsewhere["id"]}) == 3
    assert by_b["author"]["id"] == h.b.id and by_b["nonce"] == "same"


async def test_nonce_of_a_deleted_message_sends_anew(client, accounts, rt):
    h = await hall(client, accounts, rt)
    first = await post(client, h.a, h.general, "first", nonce="gone")
    r = await client.delete(url(h.general, f"/{first['id']}"), headers=h.a.headers)
    assert r.status_code == 204
    again = await post(client, h.a, h.general, "again", nonce="gone")
    assert again["id"] != first["id"]


# --- replies ------------------------------------------------------------------------------------------------

async def test_reply_in_the_same_room_fills_referenced_message(client, accounts, rt):
    h = await hall(client, accounts, rt)
    target = await post(client, h.a, h.general, "/me waves")
    reply = await post(client, h.b, h.general, "hi back", reply_to_id=target["id"])
    assert reply["reply_to_id"] == target["id"]
    ref = reply["referenced_message"]
    assert set(ref) == {"id", "author", "content", "kind", "webhook"}
    assert ref["id"] == target["id"] and ref["author"]["id"] == h.a.id
    assert (ref["content"], ref["kind"], ref["webhook"]) == ("waves", "action", None)
    listed = (await history(client, h.owner, h.general))["messages"][0]
    assert listed["referenced_message"] == ref
    # A reply to a system message carries a null author.
    system = (await history(client, h.owner, h.general))["messages"][-1]
    assert system["kind"] == "system"
    reply = await post(client, h.b, h.general, "welcome", reply_to_id=system["id"])
    assert reply["referenced_message"]["author"] is None and reply["referenced_message"]["kind"] == "system"


async def test_reply_to_another_room_or_unknown_message_is_422(client, accounts, rt):
    h = await hall(client, accounts, rt)
    other = await room(client, h.owner, h.id, name="other")
    elsewhere = await post(client, h.a, other["id"], "over there")
    before = await message_count(rt, h.general)
    invalid(await send(client, h.a, h.general, "re", reply_to_id=elsewhere["id"]), "reply_to_id")
    invalid(await send(client, h.a, h.general, "re", reply_to_id="123456789"), "reply_to_id")
    invalid(await send(client, h.a, h.general, "re", reply_to_id="not-an-id"), "reply_to_id")
    invalid(await send(client, h.a, h.general, "re", reply_to_id=12), "reply_to_id")
    assert await message_count(rt, h.general) == before


async def test_reply_to_a_deleted_message_shows_no_reference(client, accounts, rt):
    h = await hall(client, accounts, rt)
    target = await post(client, h.a, h.general, "soon gone")
    reply = await post(client, h.b, h.general, "re", reply_to_id=target["id"])
    assert (await client.delete(url(h.general, f"/{target['id']}"), headers=h.a.headers)).status_code == 204
    r = await client.get(url(h.general, f"/{reply['id']}"), headers=h.b.headers)
    assert r.json()["message"]["reply_to_id"] == target["id"]
    assert r.json()["message"]["referenced_message"] is None
    invalid(await send(client, h.b, h.general, "re", reply_to_id=target["id"]), "reply_to_id")


# --- mentions -----------------------------------------------------------------------------------------------

async def test_user_mentions_resolve_only_to_existing_users(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    content = f"<@{h.b.id}> <@999999999> <@{h.b.id}> <@{h.outsider.id}> <@{h.a.id}> <@abc> <@!{h.owner.id}>"
    m = await post(client, h.a, h.general, content)
    assert m["content"] == content
    assert m["mentions"] == [h.b.id, h.outsider.id, h.a.id]
    # A deleted account is no longer a user to mention.
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(h.outsider.id)).values(deleted_at=clock.now()))
    m = await post(client, h.a, h.general, content)
    assert m["mentions"] == [h.b.id, h.a.id]


async def test_channel_mentions_resolve_only_to_rooms_of_this_guild(client, accounts, rt):
    h = await hall(client, accounts, rt)
    other = await room(client, h.owner, h.id, name="other")
    foreign = await make_guild(client, h.outsider, "Elsewhere")
    content = f"see <#{other['id']}> <#{foreign['system_channel_id']}> <#424242> <#{h.general}> <#{other['id']}>"
    m = await post(client, h.a, h.general, content)
    assert m["mention_channels"] == [other["id"], h.general]
    assert m["mentions"] == []


async def test_everyone_only_for_mention_everyone_holders(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    assert (await post(client, h.a, h.general, "hey @everyone"))["mention_everyone"] is False
    assert (await post(client, h.owner, h.general, "hey @everyone"))["mention_everyone"] is True
    assert (await post(client, h.owner, h.general, "hey everyone"))["mention_everyone"] is False
    await insert_role(rt, clock, h.id, 5001, P.MENTION_EVERYONE, 1, holders=[h.b])
    assert (await post(client, h.b, h.general, "@everyone listen"))["mention_everyone"] is True
    # A room override can take it away again.
    await override(client, h.owner, h.general, h.b.id, "member", deny="MENTION_EVERYONE")
    assert (await post(client, h.b, h.general, "@everyone listen"))["mention_everyone"] is False


async def test_suppress_embeds_without_embed_links(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await update_default_permissions(rt, h.id, perms.DEFAULT & ~P.EMBED_LINKS)
    assert (await post(client, h.a, h.general, "https://example.com"))["suppress_embeds"] is True
    assert (await post(client, h.owner, h.general, "https://example.com"))["suppress_embeds"] is False


# --- refusals -----------------------------------------------------------------------------------------------

async def test_unseen_unknown_and_malformed_rooms_are_404(client, accounts, rt):
    h = await hall(client, accounts, rt)
    secret = await room(client, h.owner, h.id, name="secret")
    await override(client, h.owner, secret["id"], h.a.id, "member", deny="VIEW_CHANNEL")
    not_found(await send(client, h.a, secret["id"]), "channel.not_found")
    not_found(await send(client, h.outsider, h.general), "channel.not_found")
    not_found(await send(client, h.a, "987654321"), "channel.not_found")
    not_found(await send(client, h.a, "not-a-room"), "channel.not_found")
    assert await message_count(rt, secret["id"]) == 1  # only the channel_create system message


async def test_category_holds_no_messages(client, accounts, rt):
    h = await hall(client, accounts, rt)
    cat = await room(client, h.owner, h.id, name="cat", type="category")
    r = await send(client, h.owner, cat["id"])
    assert r.status_code == 422 and err(r)["code"] == "channel.wrong_type"


async def test_without_send_messages_is_403(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.id, "role", deny="SEND_MESSAGES")
    before = await message_count(rt, h.general)
    r = await send(client, h.a, h.general)
    denied(r, "SEND_MESSAGES")
    assert "timeout_until" not in err(r)
    assert await message_count(rt, h.general) == before
    await post(client, h.owner, h.general, "owners hold every permission")
    # A member override allowing it wins over the role deny.
    await override(client, h.owner, h.general, h.a.id, "member", allow="SEND_MESSAGES")
    await post(client, h.a, h.general)


async def test_timed_out_member_cannot_send_until_the_timeout_ends(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    until = clock.now() + timedelta(hours=1)
    await time_out(rt, h.id, h.a, until)
    r = await send(client, h.a, h.general)
    denied(r, "SEND_MESSAGES")
    assert err(r)["timeout_until"] == iso(until)
    await post(client, h.b, h.general)  # others are unaffected
    clock.advance(hours=1, seconds=1)
    await post(client, h.a, h.general)


async def test_attachment_ids_are_refused_until_files_exist(client, accounts, rt):
    h = await hall(client, accounts, rt)
    invalid(await send(client, h.a, h.general, "with file", attachment_ids=["123"]), "attachment_ids")
    invalid(await send(client, h.a, h.general, "", attachment_ids=["123"]), "attachment_ids")
    invalid(await send(client, h.a, h.general, "x", attachment_ids=[str(i) for i in range(11)]), "attachment_ids")
    invalid(await send(client, h.a, h.general, "x", attachment_ids=["nope"]), "attachment_ids")


# --- delivery -----------------------------------------------------------------------------------------------

async def test_message_create_reaches_only_viewers_of_the_room(client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    await capture_events.reset()
    m = await post(client, h.a, h.general, "who hears this", nonce="n1")
    [ev] = await events(capture_events, "MESSAGE_CREATE")
    assert ev.users == ids(h.owner, h.a)
    assert ev.sessions is None and ev.exclude_sessions == ()
    assert ev.data["id"] == m["id"] and ev.data["nonce"] == "n1"


async def test_non_member_instance_admin_gets_no_room_event(client, accounts, rt, capture_events):
    from tests.support.factories import make_admin

    h = await hall(client, accounts, rt)
    await make_admin(rt, h.outsider)
    await capture_events.reset()
    await post(client, h.a, h.general)
    [ev] = await events(capture_events, "MESSAGE_CREATE")
    assert ev.users == ids(h.owner, h.a, h.b)


async def test_last_message_id_follows_new_messages(client, accounts, rt):
    h = await hall(client, accounts, rt)
    other = await room(client, h.owner, h.id, name="other")
    before_other = (await channel_row(rt, other["id"]))["last_message_id"]
    first = await post(client, h.a, h.general)
    second = await post(client, h.b, h.general)
    assert int(second["id"]) > int(first["id"])
    assert (await channel_row(rt, h.general))["last_message_id"] == int(second["id"])
    assert (await channel_row(rt, other["id"]))["last_message_id"] == before_other

"""Room events over a real WebSocket (docs/reference/events.md): MESSAGE_*, MESSAGE_REACTION_*, CHANNEL_PINS_UPDATE and
TYPING_START reach exactly the users who may view the room at dispatch time (the two parties of a `private`
message), on every connection of theirs, in commit order; never a member without VIEW_CHANNEL, a non-member,
a third party of a private message, an instance administrator outside the guild, or the typing author."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from meadhall.core.clock import iso
from tests.support.delivery import (
    check_channel,
    check_message,
    of_type,
    online,
    refused,
    second_device,
    seen,
    types,
    until,
)
from tests.support.factories import add_member, make_admin
from tests.support.guilds import give, make_role, override, room
from tests.support.http import API
from tests.support.messages import (
    delete_message,
    edit_message,
    pin,
    post,
    react,
    reaction_url,
    start_typing,
    unpin,
    unreact,
    url,
)
from tests.support.personas import hall
from tests.support.shapes import is_id

THUMBS, HEART = "\U0001F44D", "\u2764\ufe0f"
ROOM_EVENTS = ("MESSAGE_CREATE", "MESSAGE_UPDATE", "MESSAGE_DELETE", "MESSAGE_REACTION_ADD",
               "MESSAGE_REACTION_REMOVE", "CHANNEL_PINS_UPDATE", "TYPING_START")


async def hidden_from_b(client, accounts, rt):
    """The message hall (owner, a, b in the guild; outsider not) where b may not view `general`."""
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    return h


async def secret_room(client, h, role_id=None):
    """A room the default role may not view (only the owner, instance administrators and `role_id`)."""
    overrides = [{"id": h.id, "type": "role", "deny": "VIEW_CHANNEL"}]
    if role_id is not None:
        overrides.append({"id": role_id, "type": "role", "allow": "VIEW_CHANNEL"})
    return await room(client, h.owner, h.id, name="secret", permission_overrides=overrides)


# ---- MESSAGE_CREATE -------------------------------------------------------------------------------------------

async def test_message_create_reaches_viewers_and_the_author_with_nonce(gateway, client, accounts, rt):
    h = await hidden_from_b(client, accounts, rt)
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    m = await post(client, h.a, h.general, "Hello, hall", nonce="n-42")
    assert m["nonce"] == "n-42"
    mine = await a.dispatch("MESSAGE_CREATE")
    check_message(mine, m)
    assert mine == m  # the author's copy is the answer, nonce included (4.6)
    theirs = await owner.dispatch("MESSAGE_CREATE")
    assert theirs == m and is_id(theirs["author"]["id"]) and theirs["guild_id"] == h.id
    await refused(client, h.b, b, only=ROOM_EVENTS)
    await refused(client, h.outsider, out)


async def test_message_create_reaches_every_connection_of_each_receiver(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    phone = await second_device(client, h.b)
    b1, b2, b3 = (await online(gateway, client, h.b, h.b, phone))
    m = await post(client, h.a, h.general, "to all devices")
    for got in await seen(client, h.b, b1, b2, b3):
        assert of_type(got, "MESSAGE_CREATE") == [m]  # once per connection, on each


async def test_repeated_nonce_sends_no_second_event(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    (b,) = await online(gateway, client, h.b)
    first = await post(client, h.a, h.general, "once", nonce="same")
    r = await client.post(url(h.general), json={"content": "once", "nonce": "same"}, headers=h.a.headers)
    assert r.status_code == 200 and r.json()["message"]["id"] == first["id"]
    (got,) = await seen(client, h.b, b)
    assert of_type(got, "MESSAGE_CREATE") == [first]


async def test_message_in_a_voice_room_reaches_its_viewers_only(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    voice = await room(client, h.owner, h.id, name="talk", type="voice",
                       permission_overrides=[{"id": h.b.id, "type": "member", "deny": "VIEW_CHANNEL"}])
    a, b = await online(gateway, client, h.a, h.b)
    m = await post(client, h.owner, voice["id"], "text in voice")
    assert await a.dispatch("MESSAGE_CREATE") == m
    await refused(client, h.b, b, only=ROOM_EVENTS)


# ---- private messages -----------------------------------------------------------------------------------------

async def private_hall(client, accounts, rt):
    """The hall with `outsider` turned into an instance administrator who is also a member."""
    h = await hall(client, accounts, rt)
    await make_admin(rt, h.outsider)
    await add_member(rt, h.id, h.outsider)
    return h


async def test_private_message_reaches_only_its_two_parties(gateway, client, accounts, rt):
    h = await private_hall(client, accounts, rt)
    owner, a, b, admin = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    m = await post(client, h.a, h.general, f"/ls <@{h.b.id}> secret", nonce="p-1")
    for conn in (a, b):
        got = await conn.dispatch("MESSAGE_CREATE")
        check_message(got, m)
        assert got["kind"] == "private" and got["recipient_id"] == h.b.id and got["content"] == "secret"
    # The owner holds every permission and the administrator bypasses them: neither is a party.
    await refused(client, h.owner, owner, only=ROOM_EVENTS)
    await refused(client, h.outsider, admin, only=ROOM_EVENTS)


async def test_private_message_updates_reactions_and_deletion_reach_only_its_parties(gateway, client, accounts, rt):
    h = await private_hall(client, accounts, rt)
    m = await post(client, h.a, h.general, f"/ls <@{h.b.id}> secret")
    owner, a, b, admin = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    await edit_message(client, h.a, h.general, m["id"], "secret, edited")
    await react(client, h.b, h.general, m["id"])
    await unreact(client, h.b, h.general, m["id"])
    await delete_message(client, h.a, h.general, m["id"])
    expected = ["MESSAGE_UPDATE", "MESSAGE_REACTION_ADD", "MESSAGE_REACTION_REMOVE", "MESSAGE_DELETE"]
    for conn in (a, b):
        got = [(t, d) for t, d in await until(conn, "MESSAGE_DELETE") if t in ROOM_EVENTS]
        assert types(got) == expected
        assert got[0][1]["content"] == "secret, edited" and got[0][1]["kind"] == "private"
        assert got[1][1]["user_id"] == h.b.id and got[3][1]["id"] == m["id"]
    await refused(client, h.owner, owner, only=ROOM_EVENTS)
    await refused(client, h.outsider, admin, only=ROOM_EVENTS)


async def test_public_reply_to_a_private_message_shows_the_reference_only_to_its_parties(
        gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    private = await post(client, h.a, h.general, f"/ls <@{h.b.id}> secret")
    owner, a, b = await online(gateway, client, h.owner, h.a, h.b)
    reply = await post(client, h.b, h.general, "answering in public", reply_to_id=private["id"])
    for conn in (a, b):
        got = await conn.dispatch("MESSAGE_CREATE")
        assert got["id"] == reply["id"] and got["referenced_message"]["id"] == private["id"]
        assert got["referenced_message"]["content"] == "secret"
    got = await owner.dispatch("MESSAGE_CREATE")
    check_message(got, reply)
    assert got["reply_to_id"] == private["id"] and got["referenced_message"] is None


async def test_private_message_events_stop_when_a_party_loses_view(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, f"/ls <@{h.b.id}> secret")
    a, b = await online(gateway, client, h.a, h.b)
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    await edit_message(client, h.a, h.general, m["id"], "edited after b lost the room")
    assert (await a.dispatch("MESSAGE_UPDATE"))["id"] == m["id"]
    got = await refused(client, h.b, b, only=ROOM_EVENTS)
    assert types(got) == ["CHANNEL_DELETE"]


async def test_private_message_events_stop_when_a_party_leaves_the_guild(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, f"/ls <@{h.b.id}> secret")
    a, b = await online(gateway, client, h.a, h.b)
    r = await client.delete(f"{API}/users/@me/guilds/{h.id}", headers=h.b.headers)
    assert r.status_code == 204, r.text
    await react(client, h.a, h.general, m["id"])
    await edit_message(client, h.a, h.general, m["id"], "edited after b left")
    assert (await a.dispatch("MESSAGE_UPDATE"))["id"] == m["id"]
    got = await refused(client, h.b, b, only=ROOM_EVENTS)
    assert types(got) == ["GUILD_DELETE"]


# ---- MESSAGE_UPDATE / MESSAGE_DELETE ---------------------------------------------------------------------------

async def test_message_update_reaches_viewers_with_the_full_message(gateway, client, accounts, rt, clock):
    h = await hidden_from_b(client, accounts, rt)
    m = await post(client, h.a, h.general, "first words")
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    clock.advance(5)
    edited = await edit_message(client, h.a, h.general, m["id"], "second thoughts")
    for conn in (owner, a):
        got = await conn.dispatch("MESSAGE_UPDATE")
        check_message(got, m)
        assert got == edited
        assert got["content"] == "second thoughts" and got["edited_at"] == iso(clock.now())
        assert got["created_at"] == m["created_at"]
    await refused(client, h.b, b, only=ROOM_EVENTS)
    await refused(client, h.outsider, out)


async def test_message_update_shows_each_receiver_its_own_reactions(gateway, client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    m = await post(client, h.owner, h.general, "react to me")
    await react(client, h.a, h.general, m["id"], THUMBS)
    clock.advance(1)
    await react(client, h.b, h.general, m["id"], HEART)
    owner, a, b = await online(gateway, client, h.owner, h.a, h.b)
    await edit_message(client, h.owner, h.general, m["id"], "edited")
    for conn, mine in ((owner, set()), (a, {THUMBS}), (b, {HEART})):
        got = await conn.dispatch("MESSAGE_UPDATE")
        assert [(x["emoji"], x["count"]) for x in got["reactions"]] == [(THUMBS, 1), (HEART, 1)]
        assert {x["emoji"] for x in got["reactions"] if x["me"]} == mine


async def test_message_delete_payload_and_receivers(gateway, client, accounts, rt):
    h = await hidden_from_b(client, accounts, rt)
    m = await post(client, h.a, h.general, "soon gone")
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    await delete_message(client, h.owner, h.general, m["id"])  # by a moderator
    for conn in (owner, a):
        assert await conn.dispatch("MESSAGE_DELETE") == {"id": m["id"], "channel_id": h.general, "guild_id": h.id}
    await refused(client, h.b, b, only=ROOM_EVENTS)
    await refused(client, h.outsider, out)


# ---- reactions ---------------------------------------------------------------------------------------------------

async def test_reaction_add_and_remove_reach_viewers(gateway, client, accounts, rt):
    h = await hidden_from_b(client, accounts, rt)
    m = await post(client, h.owner, h.general, "react")
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    await react(client, h.a, h.general, m["id"])
    await unreact(client, h.a, h.general, m["id"])
    payload = {"channel_id": h.general, "guild_id": h.id, "message_id": m["id"], "user_id": h.a.id,
               "emoji": THUMBS}
    for conn in (owner, a):
        got = [(t, d) for t, d in await until(conn, "MESSAGE_REACTION_REMOVE") if t.startswith("MESSAGE_REACTION")]
        assert got == [("MESSAGE_REACTION_ADD", payload), ("MESSAGE_REACTION_REMOVE", payload)]
    await refused(client, h.b, b, only=ROOM_EVENTS)
    await refused(client, h.outsider, out)


async def test_moderator_removal_names_the_reacting_user(gateway, client, accounts, rt):
    h = await hidden_from_b(client, accounts, rt)
    m = await post(client, h.owner, h.general, "react")
    await react(client, h.a, h.general, m["id"], HEART)
    a, b = await online(gateway, client, h.a, h.b)
    r = await client.delete(reaction_url(h.general, m["id"], HEART, h.a.id), headers=h.owner.headers)
    assert r.status_code == 204, r.text
    got = await a.dispatch("MESSAGE_REACTION_REMOVE")
    assert got == {"channel_id": h.general, "guild_id": h.id, "message_id": m["id"], "user_id": h.a.id,
                   "emoji": HEART}
    await refused(client, h.b, b, only=ROOM_EVENTS)


# ---- pins ----------------------------------------------------------------------------------------------------------

async def test_pins_update_reaches_viewers(gateway, client, accounts, rt, clock):
    h = await hidden_from_b(client, accounts, rt)
    m = await post(client, h.a, h.general, "pin me")
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    await pin(client, h.owner, h.general, m["id"])
    pinned_at = iso(clock.now())
    clock.advance(1)
    await unpin(client, h.owner, h.general, m["id"])
    for conn in (owner, a):
        got = of_type(await until(conn, "CHANNEL_PINS_UPDATE", lambda d: not d["pinned"]), "CHANNEL_PINS_UPDATE")
        base = {"channel_id": h.general, "guild_id": h.id, "message_id": m["id"]}
        assert got == [{**base, "pinned": True, "last_pin_timestamp": pinned_at},
                       {**base, "pinned": False, "last_pin_timestamp": None}]
    await refused(client, h.b, b, only=ROOM_EVENTS)
    await refused(client, h.outsider, out)


# ---- typing --------------------------------------------------------------------------------------------------------

async def test_typing_reaches_viewers_but_never_the_author(gateway, client, accounts, rt, clock):
    h = await hidden_from_b(client, accounts, rt)
    laptop = await second_device(client, h.a)
    owner, a1, a2, b, out = await online(gateway, client, h.owner, h.a, laptop, h.b, h.outsider)
    await start_typing(client, h.a, h.general)
    got = await owner.dispatch("TYPING_START")
    assert got == {"channel_id": h.general, "guild_id": h.id, "user_id": h.a.id, "timestamp": iso(clock.now())}
    await refused(client, h.a, a1, a2, only=["TYPING_START"])  # none of the author's devices
    await refused(client, h.b, b, only=ROOM_EVENTS)
    await refused(client, h.outsider, out)


# ---- permission changes take effect for the next event ------------------------------------------------------------

async def test_member_who_loses_view_by_override_stops_receiving_the_room(gateway, client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    m = await post(client, h.owner, h.general, "before")
    a, b = await online(gateway, client, h.a, h.b)
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    lost = await b.dispatch("CHANNEL_DELETE")
    check_channel(lost, h.general, h.id)
    # Every kind of room event after the change passes b by.
    await post(client, h.a, h.general, "after")
    await edit_message(client, h.owner, h.general, m["id"], "edited")
    await react(client, h.a, h.general, m["id"])
    await pin(client, h.owner, h.general, m["id"])
    await start_typing(client, h.a, h.general)
    await delete_message(client, h.owner, h.general, m["id"])
    assert (await a.dispatch("MESSAGE_DELETE"))["id"] == m["id"]
    await refused(client, h.b, b, only=ROOM_EVENTS)
    # Given back: CHANNEL_CREATE, then the room's events again.
    r = await client.delete(f"{API}/channels/{h.general}/permissions/{h.b.id}", headers=h.owner.headers)
    assert r.status_code == 204, r.text
    check_channel(await b.dispatch("CHANNEL_CREATE"), h.general, h.id)
    again = await post(client, h.a, h.general, "welcome back")
    assert (await b.dispatch("MESSAGE_CREATE"))["id"] == again["id"]


async def test_member_who_loses_the_role_granting_view_stops_receiving_the_room(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    crew = await make_role(client, h.owner, h.id, "crew")
    await give(client, h.owner, h.id, h.b, crew["id"])
    secret = await secret_room(client, h, crew["id"])
    a, b = await online(gateway, client, h.a, h.b)
    first = await post(client, h.owner, secret["id"], "crew only")
    assert (await b.dispatch("MESSAGE_CREATE"))["id"] == first["id"]
    r = await client.delete(f"{API}/guilds/{h.id}/members/{h.b.id}/roles/{crew['id']}", headers=h.owner.headers)
    assert r.status_code == 204, r.text
    check_channel(await b.dispatch("CHANNEL_DELETE"), secret["id"], h.id)
    await post(client, h.owner, secret["id"], "b is gone")
    await refused(client, h.b, b, only=ROOM_EVENTS)
    await refused(client, h.a, a, only=ROOM_EVENTS)  # never in the crew


async def test_default_role_losing_view_silences_every_room_but_for_the_owner(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    owner, b = await online(gateway, client, h.owner, h.b)
    r = await client.patch(f"{API}/guilds/{h.id}/roles/{h.id}", json={"permissions": "SEND_MESSAGES"},
                           headers=h.owner.headers)
    assert r.status_code == 200, r.text
    check_channel(await b.dispatch("CHANNEL_DELETE"), h.general, h.id)
    m = await post(client, h.owner, h.general, "only the owner hears this")
    assert (await owner.dispatch("MESSAGE_CREATE"))["id"] == m["id"]
    await refused(client, h.b, b, only=ROOM_EVENTS)
    r = await client.patch(f"{API}/guilds/{h.id}/roles/{h.id}", json={"permissions": "VIEW_CHANNEL|SEND_MESSAGES"},
                           headers=h.owner.headers)
    assert r.status_code == 200, r.text
    check_channel(await b.dispatch("CHANNEL_CREATE"), h.general, h.id)


async def test_timed_out_member_still_receives_the_room(gateway, client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    (b,) = await online(gateway, client, h.b)
    until_ = iso(clock.now() + timedelta(hours=1))
    r = await client.patch(f"{API}/guilds/{h.id}/members/{h.b.id}", json={"timeout_until": until_},
                           headers=h.owner.headers)
    assert r.status_code == 200, r.text
    m = await post(client, h.a, h.general, "can you read this?")
    got = await until(b, "MESSAGE_CREATE")
    assert got[-1][1]["id"] == m["id"] and "CHANNEL_DELETE" not in types(got)


async def test_removed_member_receives_nothing_from_the_guild(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    m = await post(client, h.owner, h.general, "before the kick")
    a, b = await online(gateway, client, h.a, h.b)
    r = await client.delete(f"{API}/guilds/{h.id}/members/{h.b.id}", headers=h.owner.headers)
    assert r.status_code == 204, r.text
    assert await b.dispatch("GUILD_DELETE") == {"id": h.id, "reason": "kicked"}
    await post(client, h.a, h.general, "after the kick")
    await react(client, h.a, h.general, m["id"])
    await start_typing(client, h.a, h.general)
    await room(client, h.owner, h.id, name="new-room")
    assert (await a.dispatch("CHANNEL_CREATE"))["name"] == "new-room"
    await refused(client, h.b, b, only=(*ROOM_EVENTS, "CHANNEL_CREATE", "MEMBER_REMOVE", "GUILD_UPDATE"))


# ---- instance administrators ----------------------------------------------------------------------------------------

async def test_instance_admin_receives_room_events_only_in_guilds_they_belong_to(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    inside = await accounts.register("admin_in")
    await make_admin(rt, inside)
    await add_member(rt, h.id, inside)
    await make_admin(rt, h.outsider)  # an administrator who is no member
    secret = await secret_room(client, h)
    admin_in, admin_out, a = await online(gateway, client, inside, h.outsider, h.a)
    m = await post(client, h.owner, secret["id"], "owner's hideout")
    await start_typing(client, h.owner, secret["id"])
    public = await post(client, h.owner, h.general, "for all members")
    # The member administrator sees the hidden room through the bypass.
    got = [(t, d) for t, d in await until(admin_in, "MESSAGE_CREATE", lambda d: d["id"] == public["id"])
           if t in ROOM_EVENTS]
    assert types(got) == ["MESSAGE_CREATE", "TYPING_START", "MESSAGE_CREATE"] and got[0][1]["id"] == m["id"]
    got = await until(a, "MESSAGE_CREATE", lambda d: d["id"] == public["id"])
    assert [d["id"] for t, d in got if t == "MESSAGE_CREATE"] == [public["id"]]
    await refused(client, h.outsider, admin_out)


# ---- order -------------------------------------------------------------------------------------------------------------

async def test_each_receiver_sees_commit_order_with_consecutive_sequence_numbers(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    owner, a, b = await online(gateway, client, h.owner, h.a, h.b)
    start = {c: c.last_seq for c in (owner, a, b)}
    m1 = await post(client, h.a, h.general, "one")
    await edit_message(client, h.a, h.general, m1["id"], "one, edited")
    await react(client, h.b, h.general, m1["id"])
    m2 = await post(client, h.b, h.general, "two")
    await pin(client, h.owner, h.general, m2["id"])
    r = await client.patch(f"{API}/channels/{h.general}", json={"topic": "ordered"}, headers=h.owner.headers)
    assert r.status_code == 200, r.text
    await delete_message(client, h.a, h.general, m1["id"])
    expected = ["MESSAGE_CREATE", "MESSAGE_UPDATE", "MESSAGE_REACTION_ADD", "MESSAGE_CREATE",
                "CHANNEL_PINS_UPDATE", "CHANNEL_UPDATE", "MESSAGE_DELETE"]
    for conn in (owner, a, b):
        frames = []
        while not frames or frames[-1]["t"] != "MESSAGE_DELETE":
            frame = await conn.recv()
            if frame["op"] == 0:
                frames.append(frame)
        assert [f["t"] for f in frames] == expected
        assert [f["s"] for f in frames] == list(range(start[conn] + 1, start[conn] + 1 + len(expected)))
        assert [f["d"]["id"] for f in frames if f["t"] == "MESSAGE_CREATE"] == [m1["id"], m2["id"]]


async def test_concurrent_sends_arrive_in_one_order_for_everyone(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    senders = (h.owner, h.a, h.b)
    conns = await online(gateway, client, *senders)
    answers = await asyncio.gather(*(post(client, s, h.general, f"{s['user']['username']} {i}")
                                     for i in range(3) for s in senders))
    sent = {m["id"] for m in answers}
    orders = []
    for conn in conns:
        ids: list[str] = []
        while len(ids) < len(sent):
            ids.append((await conn.dispatch("MESSAGE_CREATE"))["id"])
        assert set(ids) == sent
        orders.append(ids)
    assert orders[0] == orders[1] == orders[2]

"""Conversation events over a real WebSocket (docs/reference/events.md, docs/social.md): DM_CHANNEL_CREATE,
DM_CHANNEL_UPDATE and DM_CHANNEL_DELETE reach exactly the receivers of the transition, each with its own
view; message events of a conversation reach its participants only. Never an outsider, an instance
administrator outsider included. READY carries `dm_channels`."""

from __future__ import annotations

from tests.support.conversations import add_recipient, check_conversation, group, leave, open_dm, rename
from tests.support.delivery import check_message, of_type, online, refused, seen
from tests.support.factories import make_admin
from tests.support.messages import post, react, start_typing

DM_EVENTS = ("DM_CHANNEL_CREATE", "DM_CHANNEL_UPDATE", "DM_CHANNEL_DELETE")
MESSAGE_EVENTS = ("MESSAGE_CREATE", "MESSAGE_REACTION_ADD", "TYPING_START")


async def cast(accounts, rt):
    a, b, c, admin = [await accounts.register(n) for n in ("alice", "bob", "carol", "admin")]
    await make_admin(rt, admin)
    return a, b, c, admin


async def test_open_reaches_both_each_with_its_counterpart(gateway, api, client, accounts, rt):
    a, b, c, admin = await cast(accounts, rt)
    ga, gb, gc, gadmin = await online(gateway, client, a, b, c, admin)
    conv = await open_dm(api, a, b)
    for conn, who, other in ((ga, a, b), (gb, b, a)):
        got = await conn.dispatch("DM_CHANNEL_CREATE")
        check_conversation(got, who)
        assert got["id"] == conv["id"] and got["counterpart"]["id"] == other.id
    await refused(client, c, gc, only=DM_EVENTS)
    await refused(client, admin, gadmin, only=DM_EVENTS)


async def test_group_changes_reach_exactly_their_receivers(gateway, api, client, accounts, rt):
    a, b, c, admin = await cast(accounts, rt)
    d = await accounts.register("dave")
    conv = await open_dm(api, a, b)
    ga, gb, gc, gd, gadmin = await online(gateway, client, a, b, c, d, admin)
    await add_recipient(api, a, conv, c)
    assert (await ga.dispatch("DM_CHANNEL_UPDATE"))["is_group"]
    assert (await gb.dispatch("DM_CHANNEL_UPDATE"))["member_count"] == 3
    created = await gc.dispatch("DM_CHANNEL_CREATE")
    check_conversation(created, c)
    await refused(client, d, gd, only=DM_EVENTS)
    await rename(api, a, conv, "Named")
    for conn in (ga, gb, gc):
        assert (await conn.dispatch("DM_CHANNEL_UPDATE"))["name"] == "Named"
    await leave(api, c, conv)  # three become two: a 1:1 again
    assert await gc.dispatch("DM_CHANNEL_DELETE") == {"id": conv["id"]}
    for conn in (ga, gb):
        back = await conn.dispatch("DM_CHANNEL_UPDATE")
        assert not back["is_group"] and back["name"] is None
    await leave(api, a, conv)  # the last two: deleted
    for conn in (ga, gb):
        assert await conn.dispatch("DM_CHANNEL_DELETE") == {"id": conv["id"]}
    [after_c] = await seen(client, c, gc)
    assert of_type(after_c, "DM_CHANNEL_DELETE") == [] and of_type(after_c, "DM_CHANNEL_UPDATE") == []
    await refused(client, d, gd, only=DM_EVENTS)
    await refused(client, admin, gadmin, only=DM_EVENTS)


async def test_message_events_reach_participants_only(gateway, api, client, accounts, rt):
    a, b, c, admin = await cast(accounts, rt)
    conv = await group(api, a, b, c)
    outsider = await accounts.register("dave")
    ga, gb, gc, gadmin, gout = await online(gateway, client, a, b, c, admin, outsider)
    m = await post(client, a, conv["id"], "hi all")
    for conn in (ga, gb, gc):
        got = await conn.dispatch("MESSAGE_CREATE")
        check_message(got, m)
        assert got["guild_id"] is None
    private = await post(client, a, conv["id"], f"/ls <@{b.id}> only bob")
    assert (await ga.dispatch("MESSAGE_CREATE"))["id"] == private["id"]
    assert (await gb.dispatch("MESSAGE_CREATE"))["id"] == private["id"]
    [c_seen] = await seen(client, c, gc)
    assert private["id"] not in [d["id"] for d in of_type(c_seen, "MESSAGE_CREATE")]
    await react(client, b, conv["id"], m["id"])
    for conn in (ga, gb, gc):
        assert (await conn.dispatch("MESSAGE_REACTION_ADD"))["message_id"] == m["id"]
    await start_typing(client, c, conv["id"])
    for conn in (ga, gb):
        assert (await conn.dispatch("TYPING_START"))["user_id"] == c.id
    await refused(client, admin, gadmin, only=MESSAGE_EVENTS + DM_EVENTS)
    await refused(client, outsider, gout, only=MESSAGE_EVENTS + DM_EVENTS)


async def test_ready_carries_the_conversations(gateway, api, client, accounts, rt):
    a, b, c, _ = await cast(accounts, rt)
    dm = await open_dm(api, a, b)
    g = await group(api, c, a, b, name="Trio")
    m = await post(client, b, dm["id"], "latest")
    conn = await gateway.connect()
    ready = await conn.identify(a["token"])
    listed = ready["dm_channels"]
    assert [x["id"] for x in listed] == [dm["id"], g["id"]]
    for conv in listed:
        check_conversation(conv, a)
    assert listed[0]["counterpart"]["id"] == b.id and listed[0]["last_message"]["id"] == m["id"]
    assert listed[1]["is_group"] and listed[1]["name"] == "Trio" and listed[1]["owner_id"] == c.id
    assert listed == (await api.get("/users/@me/channels", a))["channels"]

"""Relationship and presence events over a real WebSocket (docs/social.md, docs/reference/events.md):
RELATIONSHIP_ADD and RELATIONSHIP_REMOVE reach exactly the users of the relationship, each seen from their own
side, on every connection of theirs; PRESENCE_UPDATE reaches friends only. Never an outsider; the blocked
user hears nothing of the block (only that a friendship or request disappeared); a blocked ex-friend, a
pending requester and a stranger get no PRESENCE_UPDATE. READY carries the lists and the friends' presences."""

from __future__ import annotations

from meadhall.accounts import presence
from tests.support.delivery import of_type, online, refused, second_device, seen
from tests.support.shapes import SUMMARY_FIELDS
from tests.support.social import (
    befriend,
    block,
    check_relationship,
    remove_relationship,
    request_friend,
    set_relationship,
    set_status,
)

SOCIAL = ("RELATIONSHIP_ADD", "RELATIONSHIP_REMOVE", "PRESENCE_UPDATE")


def social(got):
    """The relationship and presence dispatches among what a connection got."""
    return [(t, d) for t, d in got if t in SOCIAL]


async def only_social(client, account, *conns):
    """For each connection of `account`: its relationship and presence dispatches up to now."""
    return [social(got) for got in await seen(client, account, *conns)]


# ---- RELATIONSHIP_ADD / RELATIONSHIP_REMOVE ---------------------------------------------------------------


async def test_a_friend_request_and_its_acceptance_reach_both_sides_on_every_device(gateway, client, api, accounts):
    alice, bob, out = [await accounts.register(n) for n in ("alice", "bob", "outsider")]
    phone = await second_device(client, bob)
    a, b1, b2, o = await online(gateway, client, alice, bob, phone, out)
    sent = await request_friend(api, alice, bob)
    [[(t, d)]] = await only_social(client, alice, a)
    assert t == "RELATIONSHIP_ADD" and d == sent
    for got in await only_social(client, bob, b1, b2):
        [(t, d)] = got
        assert t == "RELATIONSHIP_ADD"
        check_relationship(d, alice, "incoming")
    await set_relationship(api, bob, alice, "friend")
    [[(t, d)]] = await only_social(client, alice, a)
    assert t == "RELATIONSHIP_ADD"
    check_relationship(d, bob, "friend")
    for got in await only_social(client, bob, b1, b2):
        assert [(t, d["type"], d["id"]) for t, d in got] == [("RELATIONSHIP_ADD", "friend", alice.id)]
    await refused(client, out, o)


async def test_removal_decline_and_cancel_reach_both_sides(gateway, client, api, accounts):
    alice, bob, carol, out = [await accounts.register(n) for n in ("alice", "bob", "carol", "outsider")]
    await befriend(api, alice, bob)
    await request_friend(api, carol, alice)
    a, b, c, o = await online(gateway, client, alice, bob, carol, out)
    await remove_relationship(api, alice, bob)  # unfriend
    await remove_relationship(api, alice, carol)  # decline
    [got_a] = await only_social(client, alice, a)
    assert got_a == [("RELATIONSHIP_REMOVE", {"id": bob.id, "type": "friend"}),
                     ("RELATIONSHIP_REMOVE", {"id": carol.id, "type": "incoming"})]
    assert await only_social(client, bob, b) == [[("RELATIONSHIP_REMOVE", {"id": alice.id, "type": "friend"})]]
    assert await only_social(client, carol, c) == [[("RELATIONSHIP_REMOVE", {"id": alice.id, "type": "outgoing"})]]
    await request_friend(api, alice, carol)
    await remove_relationship(api, alice, carol)  # cancel
    assert [t for t, _ in (await only_social(client, carol, c))[0]] == ["RELATIONSHIP_ADD", "RELATIONSHIP_REMOVE"]
    await refused(client, out, o)


async def test_the_blocked_user_hears_nothing_of_the_block(gateway, client, api, accounts):
    alice, friend, stranger, out = [await accounts.register(n) for n in ("alice", "friend", "stranger", "outsider")]
    await befriend(api, alice, friend)
    a, f, s, o = await online(gateway, client, alice, friend, stranger, out)
    await block(api, alice, friend)
    await block(api, alice, stranger)
    [got_a] = await only_social(client, alice, a)
    assert [(t, d["id"], d["type"]) for t, d in got_a] == [
        ("RELATIONSHIP_ADD", friend.id, "blocked"), ("RELATIONSHIP_ADD", stranger.id, "blocked")]
    # The ex-friend only sees the friendship disappear; the stranger gets nothing at all.
    [got_f] = await seen(client, friend, f)
    assert got_f == [("RELATIONSHIP_REMOVE", {"id": alice.id, "type": "friend"})]
    await refused(client, stranger, s)
    # Unblocking is the blocker's business only.
    await remove_relationship(api, alice, friend)
    assert await only_social(client, alice, a) == [[("RELATIONSHIP_REMOVE", {"id": friend.id, "type": "blocked"})]]
    await refused(client, friend, f)
    await refused(client, out, o)


# ---- PRESENCE_UPDATE -------------------------------------------------------------------------------------


async def circle(gateway, client, api, accounts):
    """alice, her friend bob (two devices), carol who asked her, dave she asked, eve she blocked after a
    friendship, and a stranger; all online."""
    alice, bob, carol, dave, eve, stranger = [
        await accounts.register(n) for n in ("alice", "bob", "carol", "dave", "eve", "stranger")]
    await befriend(api, alice, bob)
    await request_friend(api, carol, alice)
    await request_friend(api, alice, dave)
    await befriend(api, eve, alice)
    await block(api, alice, eve)
    phone = await second_device(client, bob)
    conns = await online(gateway, client, alice, bob, phone, carol, dave, eve, stranger)
    return (alice, bob, carol, dave, eve, stranger), conns


async def assert_only_friends_hear(client, people, conns, about):
    """bob's two devices got exactly one PRESENCE_UPDATE about `about` (returned); nobody else any."""
    _, bob, carol, dave, eve, stranger = people
    _, b1, b2, c, d, e, s = conns
    payloads = []
    for got in await seen(client, bob, b1, b2):
        [update] = [p for p in of_type(got, "PRESENCE_UPDATE") if p["user"]["id"] == about.id]
        assert set(update) == {"user", "style"} and set(update["user"]) == SUMMARY_FIELDS and update["style"] is None
        payloads.append(update)
    assert payloads[0] == payloads[1]
    for account, conn in ((carol, c), (dave, d), (eve, e), (stranger, s)):
        await refused(client, account, conn, only=["PRESENCE_UPDATE"])
    return payloads[0]


async def test_a_status_change_reaches_friends_only(gateway, client, api, accounts):
    people, conns = await circle(gateway, client, api, accounts)
    alice = people[0]
    await set_status(api, alice, "dnd")
    update = await assert_only_friends_hear(client, people, conns, alice)
    assert update["user"]["status"] == "dnd"
    await refused(client, alice, conns[0], only=["PRESENCE_UPDATE"])  # not to herself


async def test_going_invisible_reaches_friends_as_offline(gateway, client, api, accounts):
    people, conns = await circle(gateway, client, api, accounts)
    await set_status(api, people[0], "invisible")
    update = await assert_only_friends_hear(client, people, conns, people[0])
    assert update["user"]["status"] == "offline"


async def test_coming_online_on_the_gateway_reaches_friends_only(gateway, client, api, accounts):
    people, conns = await circle(gateway, client, api, accounts)
    newcomer = await accounts.register("newcomer")
    await befriend(api, newcomer, people[1])  # bob
    await online(gateway, client, newcomer)  # IDENTIFY: newcomer's first activity on the gateway
    _, bob, carol, dave, eve, stranger = people
    for got in await seen(client, bob, conns[1], conns[2]):
        [update] = [p for p in of_type(got, "PRESENCE_UPDATE") if p["user"]["id"] == newcomer.id]
        assert update["user"]["status"] == "online"
    for account, conn in ((people[0], conns[0]), (carol, conns[3]), (stranger, conns[6])):
        await refused(client, account, conn, only=["PRESENCE_UPDATE"])


async def test_the_sweeper_reaches_friends_only(gateway, client, api, accounts, rt, clock):
    people, conns = await circle(gateway, client, api, accounts)
    alice = people[0]
    await presence.touch(rt, int(alice.id))
    clock.advance(125)
    assert int(alice.id) in await presence.sweep(rt)
    update = await assert_only_friends_hear(client, people, conns, alice)
    assert update["user"]["status"] == "offline"


async def test_a_blocked_ex_friend_no_longer_hears_presence(gateway, client, api, accounts):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    await befriend(api, alice, bob)
    a, b = await online(gateway, client, alice, bob)
    await set_status(api, alice, "idle")
    assert (await b.dispatch("PRESENCE_UPDATE"))["user"]["status"] == "idle"
    await block(api, bob, alice)  # bob blocks alice: no longer friends
    await set_status(api, alice, "dnd")
    await refused(client, bob, b, only=["PRESENCE_UPDATE"])
    got = await seen(client, alice, a)
    assert [p for p in of_type(got[0], "RELATIONSHIP_REMOVE")] == [{"id": bob.id, "type": "friend"}]
    assert of_type(got[0], "PRESENCE_UPDATE") == []


# ---- READY -----------------------------------------------------------------------------------------------


async def test_ready_carries_the_relationship_lists_and_friends_presences(gateway, client, api, accounts):
    alice, bob, carol, dave, eve = [await accounts.register(n) for n in ("alice", "bob", "carol", "dave", "eve")]
    await befriend(api, alice, bob)
    await befriend(api, alice, eve)
    await set_status(api, eve, "invisible")
    await request_friend(api, carol, alice)
    await block(api, alice, dave)
    lists = await api.get("/users/@me/relationships", alice)
    conn = await gateway.connect()
    ready = await conn.identify(alice["token"])
    assert ready["relationships"] == lists
    assert {k: [r["id"] for r in v] for k, v in ready["relationships"].items()} == {
        "friends": [bob.id, eve.id], "incoming": [carol.id], "outgoing": [], "blocked": [dave.id]}
    assert [(p["user"]["id"], p["user"]["status"], p["style"]) for p in ready["presences"]] == [
        (bob.id, "online", None)]

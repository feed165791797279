"""Friends and blocking (docs/social.md; OpenAPI: listRelationships, createRelationship, updateRelationship,
deleteRelationship): every transition with its events, every refusal with its code, the escaped username
lookup, the `relationships` bucket. Events are read off the bus (who receives what; the gateway delivery is
tests/gateway/test_delivery_relationships.py)."""

from __future__ import annotations

import pytest

from meadhall.core.clock import iso
from tests.support.http import assert_error, invalid
from tests.support.social import (
    RELATIONSHIPS,
    befriend,
    block,
    check_relationship,
    relationship_url,
    relationships_of,
    remove_relationship,
    request_friend,
    set_relationship,
    soft_delete,
    types_of,
)


async def pair(accounts):
    return await accounts.register("alice"), await accounts.register("bob")


def relationship_events(log):
    """(type, receiver, payload) of every relationship event so far."""
    return [(e.type, e.users, e.data) for e in log if e.type.startswith("RELATIONSHIP_")]


async def events_of(log):
    await log.settle()
    found = relationship_events(log)
    log.clear()
    return found


def adds(found, receiver):
    return [d for t, users, d in found if t == "RELATIONSHIP_ADD" and users == (int(receiver.id),)]


def removes(found, receiver):
    return [d for t, users, d in found if t == "RELATIONSHIP_REMOVE" and users == (int(receiver.id),)]


# ---- friend requests ------------------------------------------------------------------------------


async def test_a_request_by_username_is_outgoing_for_the_sender_and_incoming_for_the_other(
        api, accounts, capture_events):
    alice, bob = await pair(accounts)
    await capture_events.reset()
    sent = await request_friend(api, alice, bob)
    check_relationship(sent, bob, "outgoing")
    assert sent["user"]["username"] == "bob"
    found = await events_of(capture_events)
    assert len(found) == 2
    [mine] = adds(found, alice)
    [theirs] = adds(found, bob)
    assert mine == sent
    check_relationship(theirs, alice, "incoming")
    assert await types_of(api, alice) == {bob.id: "outgoing"}
    assert await types_of(api, bob) == {alice.id: "incoming"}


async def test_the_username_is_compared_case_insensitively_and_trimmed(api, accounts):
    alice, bob = await pair(accounts)
    sent = await api.post(RELATIONSHIPS, alice, json={"username": "  BoB "}, expect=201)
    check_relationship(sent["relationship"], bob, "outgoing")


async def test_like_wildcards_in_the_username_are_literal(api, accounts):
    alice = await accounts.register("alice")
    abc = await accounts.register("abc")
    for pattern in ("a_c", "A_C", "a%", "%", "_bc", "ab%", "a\\bc", "abc%"):
        r = await api.request("POST", RELATIONSHIPS, alice, json={"username": pattern}, expect=None)
        assert_error(r, 404, "user.not_found")
    underscored = await accounts.register("a_c")
    sent = await api.post(RELATIONSHIPS, alice, json={"username": "A_c"}, expect=201)
    check_relationship(sent["relationship"], underscored, "outgoing")
    assert await types_of(api, alice) == {underscored.id: "outgoing"}  # abc was never found
    assert abc.id not in await types_of(api, alice)


async def test_unknown_and_deleted_users_are_not_found(api, accounts, rt):
    alice, bob = await pair(accounts)
    r = await api.request("POST", RELATIONSHIPS, alice, json={"username": "nobody"}, expect=None)
    assert_error(r, 404, "user.not_found")
    await soft_delete(rt, bob)
    r = await api.request("POST", RELATIONSHIPS, alice, json={"username": "bob"}, expect=None)
    assert_error(r, 404, "user.not_found")
    for target in (bob.id, "123456789", "not-an-id"):
        r = await api.request("PUT", relationship_url(target), alice, json={"type": "friend"}, expect=None)
        assert_error(r, 404, "user.not_found")
        r = await api.request("PUT", relationship_url(target), alice, json={"type": "blocked"}, expect=None)
        assert_error(r, 404, "user.not_found")


async def test_a_request_to_oneself_is_refused(api, accounts):
    alice = await accounts.register("alice")
    r = await api.request("POST", RELATIONSHIPS, alice, json={"username": "ALICE"}, expect=None)
    invalid(r, "username")
    for type_ in ("friend", "blocked"):
        r = await api.request("PUT", relationship_url(alice), alice, json={"type": type_}, expect=None)
        invalid(r, "user_id")
    assert await types_of(api, alice) == {}


async def test_request_bodies_are_validated(api, accounts):
    alice, bob = await pair(accounts)
    for body in ({}, {"username": ""}, {"username": "   "}, {"username": "x" * 33}, {"username": "bo\nb"}):
        invalid(await api.request("POST", RELATIONSHIPS, alice, json=body, expect=None), "username")
    for body in ({}, {"type": "incoming"}, {"type": "outgoing"}, {"type": None}):
        invalid(await api.request("PUT", relationship_url(bob), alice, json=body, expect=None), "type")


async def test_a_second_request_is_a_conflict_while_pending_or_friends(api, accounts):
    alice, bob = await pair(accounts)
    await request_friend(api, alice, bob)
    for a, b_name in ((alice, "bob"), (alice, "BOB")):
        r = await api.request("POST", RELATIONSHIPS, a, json={"username": b_name}, expect=None)
        assert_error(r, 409, "relationship.already_exists")
    await set_relationship(api, bob, alice, "friend")
    for a, b in ((alice, "bob"), (bob, "alice")):
        r = await api.request("POST", RELATIONSHIPS, a, json={"username": b}, expect=None)
        assert_error(r, 409, "relationship.already_exists")


async def test_a_request_to_someone_who_asked_first_makes_friends(api, accounts, capture_events, clock):
    alice, bob = await pair(accounts)
    await request_friend(api, bob, alice)
    clock.advance(30)
    await capture_events.reset()
    friends = await request_friend(api, alice, bob)  # 201 with `friend`
    check_relationship(friends, bob, "friend")
    assert friends["since"] == iso(clock.now())
    found = await events_of(capture_events)
    assert [d["type"] for d in adds(found, alice)] == ["friend"]
    assert [d["type"] for d in adds(found, bob)] == ["friend"]
    assert removes(found, alice) == removes(found, bob) == []
    assert await types_of(api, alice) == {bob.id: "friend"}
    assert await types_of(api, bob) == {alice.id: "friend"}


# ---- PUT friend --------------------------------------------------------------------------------------


async def test_put_friend_accepts_an_incoming_request(api, accounts, capture_events, clock):
    alice, bob = await pair(accounts)
    asked = await request_friend(api, alice, bob)
    clock.advance(90)
    await capture_events.reset()
    accepted = await set_relationship(api, bob, alice, "friend")
    check_relationship(accepted, alice, "friend")
    assert accepted["since"] == iso(clock.now()) != asked["since"]  # since: when the type was reached
    found = await events_of(capture_events)
    [for_bob] = adds(found, bob)
    [for_alice] = adds(found, alice)
    assert for_bob == accepted
    check_relationship(for_alice, bob, "friend")
    assert not [e for e in capture_events if e.type == "PRESENCE_UPDATE"]  # accepting is no presence change
    [listed] = (await relationships_of(api, alice))["friends"]
    assert listed == for_alice | {"user": listed["user"]}


async def test_put_friend_without_a_relation_sends_a_request(api, accounts, capture_events):
    alice, bob = await pair(accounts)
    await capture_events.reset()
    sent = await set_relationship(api, alice, bob, "friend")
    check_relationship(sent, bob, "outgoing")
    found = await events_of(capture_events)
    assert [d["type"] for d in adds(found, alice)] == ["outgoing"]
    assert [d["type"] for d in adds(found, bob)] == ["incoming"]
    assert await types_of(api, bob) == {alice.id: "incoming"}


async def test_put_friend_when_already_friends_or_asked_changes_nothing(api, accounts, capture_events, clock):
    alice, bob = await pair(accounts)
    sent = await request_friend(api, alice, bob)
    clock.advance(10)
    await capture_events.reset()
    again = await set_relationship(api, alice, bob, "friend")
    assert (again["type"], again["since"]) == ("outgoing", sent["since"])
    await set_relationship(api, bob, alice, "friend")
    clock.advance(10)
    await capture_events.reset()
    for a, b in ((alice, bob), (bob, alice)):
        same = await set_relationship(api, a, b, "friend")
        assert same["type"] == "friend"
    assert await events_of(capture_events) == []


# ---- blocks --------------------------------------------------------------------------------------


@pytest.mark.parametrize("before", ["none", "friend", "outgoing", "incoming"])
async def test_blocking_ends_a_friendship_or_request_and_tells_the_other_only_of_its_end(
        api, accounts, capture_events, before):
    alice, bob = await pair(accounts)
    if before == "friend":
        await befriend(api, alice, bob)
    elif before == "outgoing":
        await request_friend(api, alice, bob)
    elif before == "incoming":
        await request_friend(api, bob, alice)
    await capture_events.reset()
    blocked = await block(api, alice, bob)
    check_relationship(blocked, bob, "blocked")
    found = await events_of(capture_events)
    assert adds(found, alice) == [blocked]
    assert removes(found, alice) == []
    assert adds(found, bob) == []  # no event tells bob of the block ...
    theirs = {"none": [], "friend": [{"id": alice.id, "type": "friend"}],
              "outgoing": [{"id": alice.id, "type": "incoming"}], "incoming": [{"id": alice.id, "type": "outgoing"}]}
    assert removes(found, bob) == theirs[before]  # ... only that what they had disappeared
    assert await types_of(api, alice) == {bob.id: "blocked"}
    assert await types_of(api, bob) == {}
    assert len(found) == 1 + len(theirs[before])


async def test_blocking_twice_changes_nothing(api, accounts, capture_events, clock):
    alice, bob = await pair(accounts)
    first = await block(api, alice, bob)
    clock.advance(5)
    await capture_events.reset()
    assert await block(api, alice, bob) == first
    assert await events_of(capture_events) == []


async def test_friend_requests_are_refused_across_a_block_in_both_directions(api, accounts):
    alice, bob = await pair(accounts)
    await block(api, alice, bob)
    for a, b_name, b in ((alice, "bob", bob), (bob, "alice", alice)):
        r = await api.request("POST", RELATIONSHIPS, a, json={"username": b_name}, expect=None)
        assert_error(r, 403, "relationship.blocked")
        r = await api.request("PUT", relationship_url(b), a, json={"type": "friend"}, expect=None)
        assert_error(r, 403, "relationship.blocked")
    assert await types_of(api, alice) == {bob.id: "blocked"}
    assert await types_of(api, bob) == {}


async def test_the_blocked_user_may_block_back_and_each_unblock_lifts_only_their_own(
        api, accounts, capture_events):
    alice, bob = await pair(accounts)
    await block(api, alice, bob)
    await capture_events.reset()
    await block(api, bob, alice)
    found = await events_of(capture_events)
    assert [(t, users) for t, users, _ in found] == [("RELATIONSHIP_ADD", (int(bob.id),))]
    assert await types_of(api, alice) == {bob.id: "blocked"}
    assert await types_of(api, bob) == {alice.id: "blocked"}

    await remove_relationship(api, alice, bob)
    found = await events_of(capture_events)
    assert found == [("RELATIONSHIP_REMOVE", (int(alice.id),), {"id": bob.id, "type": "blocked"})]
    assert await types_of(api, alice) == {}
    assert await types_of(api, bob) == {alice.id: "blocked"}  # bob's block stays
    r = await api.request("POST", RELATIONSHIPS, alice, json={"username": "bob"}, expect=None)
    assert_error(r, 403, "relationship.blocked")

    await remove_relationship(api, bob, alice)
    await befriend(api, alice, bob)  # nothing stands between them any more
    assert await types_of(api, alice) == {bob.id: "friend"}


async def test_unblocking_leaves_no_relation(api, accounts, capture_events):
    alice, bob = await pair(accounts)
    await befriend(api, alice, bob)
    await block(api, alice, bob)
    await capture_events.reset()
    await remove_relationship(api, alice, bob)
    found = await events_of(capture_events)
    assert found == [("RELATIONSHIP_REMOVE", (int(alice.id),), {"id": bob.id, "type": "blocked"})]
    assert await types_of(api, alice) == await types_of(api, bob) == {}
    assert (await request_friend(api, bob, alice))["type"] == "outgoing"


# ---- DELETE ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["friend", "decline", "cancel"])
async def test_delete_removes_both_sides_and_tells_both(api, accounts, capture_events, kind):
    alice, bob = await pair(accounts)
    if kind == "friend":
        await befriend(api, alice, bob)
    elif kind == "decline":
        await request_friend(api, bob, alice)  # alice declines bob's request
    else:
        await request_friend(api, alice, bob)  # alice cancels her request
    await capture_events.reset()
    await remove_relationship(api, alice, bob)
    mine, theirs = {"friend": ("friend", "friend"), "decline": ("incoming", "outgoing"),
                    "cancel": ("outgoing", "incoming")}[kind]
    found = await events_of(capture_events)
    assert removes(found, alice) == [{"id": bob.id, "type": mine}]
    assert removes(found, bob) == [{"id": alice.id, "type": theirs}]
    assert len(found) == 2
    assert await types_of(api, alice) == await types_of(api, bob) == {}
    r = await api.request("DELETE", relationship_url(bob), alice, expect=None)
    assert_error(r, 404, "relationship.not_found")


async def test_delete_without_a_relationship_is_not_found(api, accounts, rt):
    alice, bob = await pair(accounts)
    for target in (bob.id, alice.id, "123456789", "not-an-id", "99999999999999999999999"):
        r = await api.request("DELETE", relationship_url(target), alice, expect=None)
        assert_error(r, 404, "relationship.not_found")
    await block(api, bob, alice)  # bob's block is no relationship of alice's
    r = await api.request("DELETE", relationship_url(bob), alice, expect=None)
    assert_error(r, 404, "relationship.not_found")


# ---- lists ----------------------------------------------------------------------------------------


async def test_the_lists_hold_each_relationship_under_its_type(api, accounts):
    me = await accounts.register("me")
    friend, asker, asked, blocked = [await accounts.register(n) for n in ("friend", "asker", "asked", "blocked")]
    assert await relationships_of(api, me) == {"friends": [], "incoming": [], "outgoing": [], "blocked": []}
    await befriend(api, me, friend)
    await request_friend(api, asker, me)
    await request_friend(api, me, asked)
    await block(api, me, blocked)
    lists = await relationships_of(api, me)
    assert {k: [r["id"] for r in v] for k, v in lists.items()} == {
        "friends": [friend.id], "incoming": [asker.id], "outgoing": [asked.id], "blocked": [blocked.id]}
    [f] = lists["friends"]
    check_relationship(f, friend, "friend")
    assert f["user"]["username"] == "friend" and f["user"]["status"] == "online" and not f["user"]["deleted"]


async def test_a_deleted_friend_is_listed_as_a_deleted_user(api, accounts, rt):
    alice, bob = await pair(accounts)
    await befriend(api, alice, bob)
    await soft_delete(rt, bob)
    [gone] = (await relationships_of(api, alice))["friends"]
    assert gone["user"]["deleted"] is True and gone["user"]["username"] == f"deleted-{bob.id}"
    await remove_relationship(api, alice, bob)  # and may be removed


# ---- rate limit --------------------------------------------------------------------------------------


async def test_the_relationships_bucket_allows_20_changes_a_minute(api, accounts, clock):
    alice, bob = await pair(accounts)
    await request_friend(api, alice, bob)
    for _ in range(19):
        await set_relationship(api, alice, bob, "friend")  # unchanged, but a change request all the same
    r = await api.request("PUT", relationship_url(bob), alice, json={"type": "friend"}, expect=None)
    body = assert_error(r, 429, "rate_limited")
    assert body["bucket"] == "relationships" and r.headers["X-RateLimit-Bucket"] == "relationships"
    r = await api.request("DELETE", relationship_url(bob), alice, expect=None)
    assert_error(r, 429, "rate_limited")
    r = await api.request("POST", RELATIONSHIPS, alice, json={"username": "bob"}, expect=None)
    assert_error(r, 429, "rate_limited")
    await relationships_of(api, alice)  # reading is not limited by the bucket
    await api.get(RELATIONSHIPS, bob)
    await set_relationship(api, bob, alice, "friend")  # the bucket is per user
    clock.advance(61)
    await remove_relationship(api, alice, bob)

"""Presence to friends (docs/social.md): PRESENCE_UPDATE `{user, style}` reaches the user's friends only —
when they come online after being offline (REST activity or the gateway), when their chosen status, custom
status or public profile changes, and when the sweeper finds them offline; `invisible` reads as offline and
never comes online. READY carries the lists and the friends' presences in a fixed number of queries.
Events are read off the bus here; tests/gateway/test_delivery_relationships.py checks the delivery."""

from __future__ import annotations

from meadhall.accounts import presence
from meadhall.gateway.auth import GatewayIdentity
from meadhall.gateway.ready import ready_payload
from tests.support.conversations import open_dm
from tests.support.messages import post
from tests.support.shapes import SUMMARY_FIELDS
from tests.support.social import befriend, block, remove_relationship, request_friend, set_status

IDLE = 125  # seconds: past the 2-minute mark


async def people(api, accounts):
    """alice with a friend (bob), someone she asked (asked), someone who asked her (asker), someone she
    blocked (blocked, an ex-friend) and a stranger."""
    alice, bob, asked, asker, blocked, stranger = [
        await accounts.register(n) for n in ("alice", "bob", "asked", "asker", "blocked", "stranger")]
    await befriend(api, alice, bob)
    await request_friend(api, alice, asked)
    await request_friend(api, asker, alice)
    await befriend(api, blocked, alice)
    await block(api, alice, blocked)
    return alice, bob, stranger


async def presences(log, of):
    """The PRESENCE_UPDATEs about `of` so far: (receivers, payload); the log is emptied."""
    await log.settle()
    found = [(set(e.users), e.data) for e in log if e.type == "PRESENCE_UPDATE" and e.data["user"]["id"] == of.id]
    log.clear()
    for _, d in found:
        assert set(d) == {"user", "style"} and d["style"] is None
        assert set(d["user"]) == SUMMARY_FIELDS
    return found


async def test_rest_activity_after_being_offline_tells_the_friends_only(api, accounts, clock, capture_events):
    alice, bob, _ = await people(api, accounts)
    clock.advance(600)
    await capture_events.reset()
    await api.get("/users/@me", alice)  # first activity after 10 minutes: alice comes online
    [(receivers, d)] = await presences(capture_events, alice)
    assert receivers == {int(bob.id)}
    assert d["user"]["status"] == "online"
    assert (await api.get(f"/users/{alice.id}", bob))["user"]["status"] == "online"  # the summary agrees

    clock.advance(61)
    await api.get("/users/@me", alice)  # still online: nothing to tell
    assert await presences(capture_events, alice) == []
    clock.advance(IDLE)
    await api.get("/users/@me", alice)
    assert [r for r, _ in await presences(capture_events, alice)] == [{int(bob.id)}]


async def test_gateway_activity_after_being_offline_tells_the_friends(api, accounts, rt, clock, capture_events):
    alice, bob, _ = await people(api, accounts)
    clock.advance(600)
    await capture_events.reset()
    await presence.touch(rt, int(alice.id), in_client=True)  # IDENTIFY or a heartbeat
    [(receivers, d)] = await presences(capture_events, alice)
    assert receivers == {int(bob.id)} and d["user"]["status"] == "online"
    clock.advance(30)
    await presence.touch(rt, int(alice.id), in_client=True)
    clock.advance(100)
    await presence.touch(rt, int(alice.id), in_client=True)  # never 2 minutes apart: no news
    assert await presences(capture_events, alice) == []


async def test_status_custom_status_and_profile_changes_reach_friends(api, accounts, capture_events):
    alice, bob, _ = await people(api, accounts)
    await capture_events.reset()
    await set_status(api, alice, "dnd")
    [(receivers, d)] = await presences(capture_events, alice)
    assert receivers == {int(bob.id)} and d["user"]["status"] == "dnd"
    await api.patch("/users/@me", alice, json={"custom_status": "brewing", "custom_status_emoji": "\U0001F37A"})
    [(_, d)] = await presences(capture_events, alice)
    assert (d["user"]["custom_status"], d["user"]["custom_status_emoji"]) == ("brewing", "\U0001F37A")
    await api.patch("/users/@me", alice, json={"display_name": "Alice of the Hall", "bio": "mead"})
    [(_, d)] = await presences(capture_events, alice)
    assert (d["user"]["display_name"], d["user"]["bio"]) == ("Alice of the Hall", "mead")
    # Private fields and unchanged values are no presence change.
    await api.patch("/users/@me", alice, json={"locale": "de", "timezone": "UTC"})
    await api.patch("/users/@me", alice, json={"status": "dnd"})
    assert await presences(capture_events, alice) == []


async def test_a_user_without_friends_announces_nothing(api, accounts, clock, capture_events):
    loner = await accounts.register("loner")
    await request_friend(api, loner, await accounts.register("maybe"))
    await capture_events.reset()
    await set_status(api, loner, "idle")
    clock.advance(600)
    await api.get("/users/@me", loner)
    assert await presences(capture_events, loner) == []


async def test_going_invisible_looks_like_going_offline_and_never_comes_online(
        api, accounts, rt, clock, capture_events):
    alice, bob, _ = await people(api, accounts)
    await api.patch("/users/@me", alice, json={"custom_status": "here"})
    await capture_events.reset()
    await set_status(api, alice, "invisible")
    [(receivers, d)] = await presences(capture_events, alice)
    assert receivers == {int(bob.id)}
    assert (d["user"]["status"], d["user"]["custom_status"]) == ("offline", None)
    assert (await api.get(f"/users/{alice.id}", bob))["user"]["status"] == "offline"

    clock.advance(600)
    await api.get("/users/@me", alice)
    await presence.touch(rt, int(alice.id), in_client=True)
    await api.patch("/users/@me", alice, json={"custom_status": "hidden"})  # invisible to friends as well
    assert await presences(capture_events, alice) == []
    clock.advance(IDLE)
    assert int(alice.id) not in await presence.sweep(rt)  # never reported offline either
    await set_status(api, alice, "online")  # visible again: comes online
    [(_, d)] = await presences(capture_events, alice)
    assert (d["user"]["status"], d["user"]["custom_status"]) == ("online", "hidden")


async def test_the_sweeper_tells_the_friends_once_when_a_user_goes_offline(api, accounts, rt, clock, capture_events):
    alice, bob, _ = await people(api, accounts)
    await api.patch("/users/@me", alice, json={"custom_status": "brewing"})
    clock.advance(600)
    await presence.touch(rt, int(alice.id), in_client=True)
    await capture_events.reset()
    clock.advance(110)
    assert int(alice.id) not in await presence.sweep(rt)
    assert await presences(capture_events, alice) == []
    clock.advance(15)
    assert int(alice.id) in await presence.sweep(rt)
    [(receivers, d)] = await presences(capture_events, alice)
    assert receivers == {int(bob.id)}
    assert (d["user"]["status"], d["user"]["custom_status"], d["user"]["custom_status_emoji"]) == (
        "offline", None, None)
    clock.advance(30)
    await presence.sweep(rt)
    assert await presences(capture_events, alice) == []  # once


async def test_a_blocked_ex_friend_and_a_removed_friend_hear_nothing_more(api, accounts, capture_events):
    alice, bob, _ = await people(api, accounts)
    carol = await accounts.register("carol")
    await befriend(api, alice, carol)
    await block(api, bob, alice)
    await remove_relationship(api, carol, alice)
    await capture_events.reset()
    await set_status(api, alice, "idle")
    assert await presences(capture_events, alice) == []


async def test_ready_carries_the_lists_and_the_presences_of_friends_not_offline(api, accounts, rt, clock):
    alice, bob, _ = await people(api, accounts)
    carol = await accounts.register("carol")
    dave = await accounts.register("dave")
    for friend in (carol, dave):
        await befriend(api, alice, friend)
    await set_status(api, carol, "invisible")
    await set_status(api, dave, "dnd")
    lists = await api.get("/users/@me/relationships", alice)
    ready = await ready_payload(rt, GatewayIdentity(int(alice.id), 0, False), "gs")
    assert ready is not None
    assert ready["relationships"] == lists
    assert {p["user"]["id"]: p["user"]["status"] for p in ready["presences"]} == {bob.id: "online", dave.id: "dnd"}
    assert all(p["style"] is None and set(p["user"]) == SUMMARY_FIELDS for p in ready["presences"])
    clock.advance(IDLE)  # everybody idle: no friend is present
    ready = await ready_payload(rt, GatewayIdentity(int(alice.id), 0, False), "gs")
    assert ready is not None and ready["presences"] == []


async def test_ready_costs_the_same_queries_for_one_friend_and_for_many(api, accounts, rt, assert_query_count):
    alice = await accounts.register("alice")
    few = await accounts.register("few")
    await befriend(api, few, alice)
    with assert_query_count(100) as one:
        await ready_payload(rt, GatewayIdentity(int(few.id), 0, False), "gs")
    for i in range(12):
        await befriend(api, alice, await accounts.register(f"friend{i}"))
    with assert_query_count(100) as many:
        ready = await ready_payload(rt, GatewayIdentity(int(alice.id), 0, False), "gs")
    assert ready is not None and len(ready["relationships"]["friends"]) == 13 and len(ready["presences"]) == 13
    assert len(many) == len(one)


async def test_ready_shows_a_friend_alike_in_every_part_and_as_the_profile_shows_them(api, accounts, rt):
    """READY makes each user's summary once and shares it between its parts: a friend in the friends list,
    the presences, a conversation and as the author of its last message reads the same everywhere, and
    as GET /users/{id} shows them (after a profile change too)."""
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    await befriend(api, alice, bob)
    await api.patch("/users/@me", bob, json={"display_name": "Bob B", "custom_status": "on a boat"}, expect=200)
    conv = await open_dm(api, alice, bob)
    await post(api.client, bob, conv["id"], "ahoy")
    ready = await ready_payload(rt, GatewayIdentity(int(alice.id), 0, False), "gs")
    assert ready is not None
    profile = (await api.get(f"/users/{bob.id}", alice, expect=200))["user"]
    [friend] = ready["relationships"]["friends"]
    [presence] = ready["presences"]
    [dm] = ready["dm_channels"]
    shown = [friend["user"], presence["user"], dm["counterpart"], dm["last_message"]["author"],
             next(m for m in dm["members"] if m["id"] == bob.id)]
    assert all(s == profile for s in shown)
    assert friend["user"]["display_name"] == "Bob B" and friend["user"]["custom_status"] == "on a boat"
    assert dm["last_message"]["content"] == "ahoy"


async def test_the_next_ready_shows_a_changed_profile_at_once(api, accounts, rt):
    """Summaries are made once per READY and kept no longer: nothing of one READY reaches the next."""
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    await befriend(api, alice, bob)
    before = await ready_payload(rt, GatewayIdentity(int(alice.id), 0, False), "gs")
    await api.patch("/users/@me", bob, json={"display_name": "Changed"}, expect=200)
    after = await ready_payload(rt, GatewayIdentity(int(alice.id), 0, False), "gs")
    assert before is not None and after is not None
    assert before["relationships"]["friends"][0]["user"]["display_name"] == "bob"
    assert after["relationships"]["friends"][0]["user"]["display_name"] == "Changed"

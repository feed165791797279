"""READY's conversations and relationships, and the conversation list, at scale and at the presence mark
(docs/social.md, docs/gateway.md): a fixed number of statements whatever the number of conversations, and a
friend's status read alike in every part of READY, in the list and in the public profile at the very
instant the 2-minute mark passes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from meadhall.gateway.auth import GatewayIdentity
from meadhall.gateway.ready import ready_payload
from tests.support.conversations import conversations_of, group, open_dm
from tests.support.messages import post
from tests.support.social import befriend

START = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)  # whole seconds: the API shows milliseconds


async def ready_of(rt, who):
    ready = await ready_payload(rt, GatewayIdentity(int(who.id), 0, False), "gs")
    assert ready is not None
    return ready


async def test_ready_costs_the_same_queries_for_two_conversations_and_for_many(api, accounts, rt,
                                                                             assert_query_count):
    me, *others = [await accounts.register(f"user{i}") for i in range(11)]

    async def talk(other):
        conv = await open_dm(api, me, other)
        await post(api.client, other, conv["id"], "hi")
        await post(api.client, me, conv["id"], f"/ls <@{other.id}> psst")  # a private last message

    await befriend(api, me, others[0])  # the friends' styles are asked only when there are friends
    for other in others[:2]:
        await talk(other)
    with assert_query_count(100) as few:
        assert len((await ready_of(rt, me))["dm_channels"]) == 2
    for other in others[2:7]:
        await talk(other)
    await group(api, me, *others[7:])
    with assert_query_count(100) as many:
        ready = await ready_of(rt, me)
    assert len(ready["dm_channels"]) == 8 and len(ready["relationships"]["friends"]) == 1
    assert len(many) == len(few)


async def test_a_friend_reads_online_until_the_two_minute_mark_and_offline_just_after(api, accounts, clock, rt):
    clock.set(START)
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    await befriend(api, alice, bob)
    await api.patch("/users/@me", bob, json={"status": "dnd", "custom_status": "on a boat"}, expect=200)
    conv = await open_dm(api, alice, bob)
    await post(api.client, bob, conv["id"], "ahoy")  # bob's last activity: START

    async def bob_everywhere():
        """bob's summary in each part of alice's READY, her conversation list and his public profile."""
        ready = await ready_of(rt, alice)
        [dm] = ready["dm_channels"]
        [listed] = await conversations_of(api, alice)
        profile = (await api.get(f"/users/{bob.id}", alice, expect=200))["user"]
        shown = [ready["relationships"]["friends"][0]["user"], dm["counterpart"], dm["last_message"]["author"],
                 next(m for m in dm["members"] if m["id"] == bob.id), listed["counterpart"],
                 listed["last_message"]["author"]]
        assert all(s == profile for s in shown)
        assert dm["status"] == listed["status"] == profile["status"]
        return profile, [p["user"] for p in ready["presences"]]

    clock.set(START + timedelta(minutes=2))
    profile, present = await bob_everywhere()
    assert (profile["status"], profile["custom_status"]) == ("dnd", "on a boat")
    assert present == [profile]
    clock.set(START + timedelta(minutes=2, microseconds=1))
    profile, present = await bob_everywhere()
    assert (profile["status"], profile["custom_status"], profile["custom_status_emoji"]) == ("offline", None, None)
    assert present == []

"""Opening one-to-one conversations, creating groups, listing and reading them (OpenAPI: openConversation,
createGroupConversation, listConversations, getChannel; docs/social.md "Direct conversations"): the name rule,
idempotent opening, every refusal, the list order and its last messages, and outsiders (instance
administrators included) answered 404."""

from __future__ import annotations

from meadhall.core.limits import GROUP_DM_MAX_INVITED
from tests.support.conversations import (
    CONVERSATIONS,
    GROUPS,
    check_conversation,
    conversation_row,
    conversations_of,
    group,
    member_ids,
    open_dm,
    participant_ids,
    soft_delete,
)
from tests.support.factories import make_admin
from tests.support.http import assert_error, invalid
from tests.support.messages import post
from tests.support.social import block


async def people(accounts, n):
    return [await accounts.register(f"person{i}", display_name=f"Person {i}") for i in range(n)]


# ---- opening a one-to-one conversation -------------------------------------------------------------------

async def test_open_creates_then_returns_the_same_conversation(api, accounts, rt, capture_events):
    a, b = await people(accounts, 2)
    await capture_events.reset()
    conv = await open_dm(api, a, b, expect=201)
    check_conversation(conv, a)
    assert conv["counterpart"]["id"] == b.id and member_ids(conv) == {a.id, b.id}
    assert conv["last_message"] is None and not conv["is_group"]
    row = await conversation_row(rt, conv)
    low, high = sorted((int(a.id), int(b.id)))
    assert row["dm_pair"] == f"{low}:{high}" and row["guild_id"] is None
    await capture_events.settle()
    created = capture_events.of_type("DM_CHANNEL_CREATE")
    assert sorted(e.users for e in created) == sorted([(int(a.id),), (int(b.id),)])
    for ev in created:
        # Each receiver sees the other as its counterpart.
        assert ev.data["id"] == conv["id"] and ev.data["counterpart"]["id"] != str(ev.users[0])
    await capture_events.reset()
    again = await open_dm(api, a, b, expect=200)
    assert again == conv
    from_b = await open_dm(api, b, a, expect=200)
    assert from_b["id"] == conv["id"] and from_b["counterpart"]["id"] == a.id
    await capture_events.settle()
    assert capture_events.of_type("DM_CHANNEL_CREATE") == []


async def test_open_refusals(api, accounts, rt):
    a, b, c = await people(accounts, 3)
    invalid(await api.request("POST", CONVERSATIONS, a, json={"recipient_id": a.id}, expect=422), "recipient_id")
    invalid(await api.request("POST", CONVERSATIONS, a, json={"recipient_id": "x1"}, expect=422), "recipient_id")
    invalid(await api.request("POST", CONVERSATIONS, a, json={}, expect=422), "recipient_id")
    assert_error(await api.request("POST", CONVERSATIONS, a, json={"recipient_id": "123456789"}, expect=404),
                 404, "user.not_found")
    await soft_delete(rt, c)
    assert_error(await api.request("POST", CONVERSATIONS, a, json={"recipient_id": c.id}, expect=404),
                 404, "user.not_found")
    await block(api, b, a)  # a block by either side refuses both directions
    for x, y in ((a, b), (b, a)):
        r = await api.request("POST", CONVERSATIONS, x, json={"recipient_id": y.id}, expect=403)
        assert_error(r, 403, "relationship.blocked")


async def test_open_is_rate_limited_by_dm_open(api, accounts):
    me, *others = await people(accounts, 22)
    for other in others[:20]:
        r = await api.request("POST", CONVERSATIONS, me, json={"recipient_id": other.id}, expect=201)
        assert r.headers["X-RateLimit-Bucket"] == "dm.open"
    r = await api.request("POST", CONVERSATIONS, me, json={"recipient_id": others[20].id}, expect=429)
    assert r.json()["error"]["bucket"] == "dm.open"
    r = await api.request("POST", GROUPS, me, json={"recipient_ids": [others[0].id, others[1].id]}, expect=429)
    assert r.json()["error"]["bucket"] == "dm.open"


async def test_open_returns_the_oldest_one_to_one_of_the_pair(api, accounts, rt):
    a, b, c = await people(accounts, 3)
    first = await open_dm(api, a, b)
    trio = await group(api, a, b, c)
    await api.delete(f"/channels/{trio['id']}/recipients/{c.id}", a)  # a group of three becomes a 1:1 of a, b
    assert (await conversation_row(rt, trio))["dm_pair"] == (await conversation_row(rt, first))["dm_pair"]
    assert (await open_dm(api, b, a, expect=200))["id"] == first["id"]


# ---- groups ---------------------------------------------------------------------------------------------------

async def test_group_of_two_invited_with_a_built_name(api, accounts, rt, capture_events):
    a, b, c = await people(accounts, 3)
    await capture_events.reset()
    conv = await group(api, a, c, b)
    check_conversation(conv, a)
    assert conv["is_group"] and conv["member_count"] == 3 and conv["owner_id"] == a.id
    # Display names of all participants, the creator first, then the invited in the order given.
    assert conv["name"] == "Person 0, Person 2, Person 1"
    assert (await conversation_row(rt, conv))["dm_pair"] is None
    await capture_events.settle()
    assert sorted(e.users[0] for e in capture_events.of_type("DM_CHANNEL_CREATE")) == sorted(
        int(x.id) for x in (a, b, c))


async def test_group_name_given_or_built_and_truncated_to_100(api, accounts):
    long_names = [await accounts.register(f"long{i}", display_name=f"{i}" * 32) for i in range(4)]
    built = await group(api, long_names[0], *long_names[1:])
    assert len(built["name"]) == 100 and built["name"].startswith("0" * 32 + ", " + "1" * 32)
    named = await group(api, long_names[0], *long_names[1:3], name="  The council  ")
    assert named["name"] == "The council"
    invalid(await api.request("POST", GROUPS, long_names[0], json={
        "recipient_ids": [long_names[1].id, long_names[2].id], "name": "x" * 101}, expect=422), "name")
    invalid(await api.request("POST", GROUPS, long_names[0], json={
        "recipient_ids": [long_names[1].id, long_names[2].id], "name": "   "}, expect=422), "name")


async def test_group_sizes(api, accounts):
    me, *others = await people(accounts, 11)
    full = await group(api, me, *others[:GROUP_DM_MAX_INVITED])
    assert full["member_count"] == 10
    for count in (0, 1, GROUP_DM_MAX_INVITED + 1):
        r = await api.request("POST", GROUPS, me, json={"recipient_ids": [o.id for o in others[:count]]}, expect=422)
        invalid(r, "recipient_ids")


async def test_group_refusals(api, accounts, rt):
    a, b, c, d = await people(accounts, 4)
    for ids in ([b.id, b.id], [b.id, "0" + b.id], [a.id, b.id], [b.id, "nope"]):
        invalid(await api.request("POST", GROUPS, a, json={"recipient_ids": ids}, expect=422), "recipient_ids")
    r = await api.request("POST", GROUPS, a, json={"recipient_ids": [b.id, "987654321"]}, expect=404)
    assert_error(r, 404, "user.not_found")
    await soft_delete(rt, d)
    r = await api.request("POST", GROUPS, a, json={"recipient_ids": [b.id, d.id]}, expect=404)
    assert_error(r, 404, "user.not_found")
    await block(api, c, a)
    r = await api.request("POST", GROUPS, a, json={"recipient_ids": [b.id, c.id]}, expect=403)
    assert_error(r, 403, "relationship.blocked")
    # Only the creator's pairs count: invited users who blocked each other may be in one group.
    await block(api, b, c)
    e = await accounts.register("eve")
    assert (await group(api, e, b, c))["member_count"] == 3


# ---- reading: GET /channels/{id} and the list -----------------------------------------------------------------

async def test_get_channel_answers_participants_only(api, accounts, rt):
    a, b, outsider = await people(accounts, 3)
    conv = await open_dm(api, a, b)
    for who, other in ((a, b), (b, a)):
        got = (await api.get(f"/channels/{conv['id']}", who))["channel"]
        check_conversation(got, who)
        assert got["counterpart"]["id"] == other.id
    await make_admin(rt, outsider)
    assert_error(await api.request("GET", f"/channels/{conv['id']}", outsider, expect=404), 404, "channel.not_found")


async def test_list_is_newest_activity_first_with_last_messages(api, accounts):
    a, b, c, d = await people(accounts, 4)
    ab = await open_dm(api, a, b)
    ac = await open_dm(api, a, c)
    trio = await group(api, a, b, d)
    assert [x["id"] for x in await conversations_of(api, a)] == [trio["id"], ac["id"], ab["id"]]
    m = await post(api.client, b, ab["id"], "hello a")
    listed = await conversations_of(api, a)
    assert [x["id"] for x in listed] == [ab["id"], trio["id"], ac["id"]]
    assert listed[0]["last_message"]["id"] == m["id"] and listed[0]["last_message"]["author"]["id"] == b.id
    assert listed[0]["counterpart"]["id"] == b.id
    assert [x["id"] for x in await conversations_of(api, c)] == [ac["id"]]
    assert await conversations_of(api, await accounts.register("nobody")) == []


async def test_last_message_counts_a_private_message_only_for_its_parties(api, accounts):
    a, b, c = await people(accounts, 3)
    trio = await group(api, a, b, c)
    public = await post(api.client, c, trio["id"], "for all")
    private = await post(api.client, a, trio["id"], f"/ls <@{b.id}> for b")
    for who, expected in ((a, private), (b, private), (c, public)):
        [conv] = await conversations_of(api, who)
        assert conv["last_message_id"] == expected["id"], who.id


async def test_the_list_takes_a_fixed_number_of_queries(api, accounts, assert_query_count):
    me, *others = await people(accounts, 13)

    async def talk(other):
        conv = await open_dm(api, me, other)
        await post(api.client, me, conv["id"], "hi")
        await post(api.client, other, conv["id"], f"/ls <@{me.id}> psst")

    for other in others[:2]:
        await talk(other)
    await group(api, me, *others[2:5])
    with assert_query_count(40) as few:
        assert len(await conversations_of(api, me)) == 3
    for other in others[5:]:
        await talk(other)
    with assert_query_count(40) as many:
        assert len(await conversations_of(api, me)) == 10
    assert len(many) == len(few)


async def test_participants_are_stored(api, accounts, rt):
    a, b, c = await people(accounts, 3)
    conv = await group(api, a, b, c)
    assert await participant_ids(rt, conv) == {a.id, b.id, c.id}

"""Reactions (OpenAPI: addReaction, listReactors; docs/reference/events.md): add, remove, list, moderator removal, limits and audiences, over HTTP."""

from __future__ import annotations

import pytest
from sqlalchemy import insert

from meadhall.db.schema import reactions
from tests.support.http import err
from tests.support.messages import message_of, post, react, reaction_url, unreact
from tests.support.personas import gathering

API = "/api/v1"
THUMBS, GRIN, HEART = "\U0001F44D", "\U0001F600", "\u2764\ufe0f"


async def test_add_is_idempotent_and_emits_once(client, accounts, rt, capture_events):
    guild, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    m = await post(client, a, ch)
    await capture_events.reset()
    await react(client, b, ch, m["id"], THUMBS)
    await react(client, b, ch, m["id"], THUMBS)
    await capture_events.settle()
    [added] = capture_events.of_type("MESSAGE_REACTION_ADD")
    assert added.data == {"channel_id": ch, "guild_id": guild["id"], "message_id": m["id"], "user_id": b.id,
                          "emoji": THUMBS}
    assert set(added.users) == {int(a.id), int(b.id)}
    assert (await message_of(client, b, ch, m["id"]))["reactions"] == [{"emoji": THUMBS, "count": 1, "me": True}]
    assert (await message_of(client, a, ch, m["id"]))["reactions"] == [{"emoji": THUMBS, "count": 1, "me": False}]


async def test_aggregates_in_order_of_first_use_from_each_point_of_view(client, accounts, rt, clock):
    _, ch, (a, b, c) = await gathering(client, accounts, rt, "bob", "carol")
    m = await post(client, a, ch)
    await react(client, a, ch, m["id"], GRIN)
    clock.advance(1)
    await react(client, b, ch, m["id"], THUMBS)
    clock.advance(1)
    await react(client, b, ch, m["id"], GRIN)
    clock.advance(1)
    await react(client, c, ch, m["id"], HEART)
    views = {acc.id: await message_of(client, acc, ch, m["id"]) for acc in (a, b, c)}
    assert views[a.id]["reactions"] == [{"emoji": GRIN, "count": 2, "me": True},
                                        {"emoji": THUMBS, "count": 1, "me": False},
                                        {"emoji": HEART, "count": 1, "me": False}]
    assert [r["me"] for r in views[b.id]["reactions"]] == [True, True, False]
    assert [r["me"] for r in views[c.id]["reactions"]] == [False, False, True]
    r = await client.get(f"{API}/channels/{ch}/messages", headers=b.headers)
    listed = next(x for x in r.json()["messages"] if x["id"] == m["id"])
    assert listed["reactions"] == views[b.id]["reactions"]
    # First use counts the reactions that remain: without alice's, GRIN was first used after THUMBS.
    await unreact(client, a, ch, m["id"], GRIN)
    assert [(x["emoji"], x["count"]) for x in (await message_of(client, a, ch, m["id"]))["reactions"]] == [
        (THUMBS, 1), (GRIN, 1), (HEART, 1)]


async def test_remove_own_is_idempotent_and_emits_only_when_removed(client, accounts, rt, capture_events):
    guild, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    m = await post(client, a, ch)
    await react(client, b, ch, m["id"], THUMBS)
    await react(client, a, ch, m["id"], THUMBS)
    await capture_events.reset()
    await unreact(client, b, ch, m["id"], THUMBS)
    await unreact(client, b, ch, m["id"], THUMBS)
    await unreact(client, b, ch, m["id"], GRIN)  # never added
    await capture_events.settle()
    [removed] = capture_events.of_type("MESSAGE_REACTION_REMOVE")
    assert removed.data == {"channel_id": ch, "guild_id": guild["id"], "message_id": m["id"], "user_id": b.id,
                            "emoji": THUMBS}
    assert set(removed.users) == {int(a.id), int(b.id)}
    assert (await message_of(client, b, ch, m["id"]))["reactions"] == [{"emoji": THUMBS, "count": 1, "me": False}]
    await unreact(client, a, ch, m["id"], THUMBS)
    assert (await message_of(client, b, ch, m["id"]))["reactions"] == []


async def test_list_reactors_by_user_id_with_cursor(client, accounts, rt):
    _, ch, people = await gathering(client, accounts, rt, "bob", "carol", "dave")
    m = await post(client, people[0], ch)
    for account in reversed(people):
        await react(client, account, ch, m["id"], HEART)
    ids = sorted((acc.id for acc in people), key=int)
    r = await client.get(reaction_url(ch, m["id"], HEART), headers=people[1].headers)
    assert r.status_code == 200, r.text
    assert [u["id"] for u in r.json()["users"]] == ids and r.json()["has_more"] is False
    assert set(r.json()["users"][0]) >= {"id", "username", "display_name", "avatar", "status"}
    r = await client.get(reaction_url(ch, m["id"], HEART), params={"limit": 2}, headers=people[1].headers)
    assert [u["id"] for u in r.json()["users"]] == ids[:2] and r.json()["has_more"] is True
    r = await client.get(reaction_url(ch, m["id"], HEART), params={"after": ids[1], "limit": 2},
                         headers=people[1].headers)
    assert [u["id"] for u in r.json()["users"]] == ids[2:] and r.json()["has_more"] is False
    r = await client.get(reaction_url(ch, m["id"], THUMBS), headers=people[1].headers)
    assert r.json() == {"users": [], "has_more": False}
    for params in ({"after": "x"}, {"limit": 0}, {"limit": 101}):
        r = await client.get(reaction_url(ch, m["id"], HEART), params=params, headers=people[1].headers)
        assert r.status_code == 422 and err(r)["code"] == "validation.failed", params


async def test_twenty_distinct_emojis_per_message(client, accounts, rt, clock):
    _, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    m = await post(client, a, ch)
    twenty = [chr(0x1F600 + i) for i in range(20)]
    async with rt.engine.begin() as conn:
        await conn.execute(insert(reactions), [
            {"message_id": int(m["id"]), "emoji": e, "user_id": int(a.id), "created_at": clock.now()} for e in twenty])
    r = await react(client, b, ch, m["id"], THUMBS, expect=409)
    assert err(r)["code"] == "reaction.limit_reached"
    await react(client, b, ch, m["id"], twenty[5])  # an existing emoji is fine
    await react(client, a, ch, m["id"], twenty[0])  # and so is repeating one's own
    view = await message_of(client, b, ch, m["id"])
    assert len(view["reactions"]) == 20 and view["reactions"][5] == {"emoji": twenty[5], "count": 2, "me": True}
    await unreact(client, a, ch, m["id"], twenty[0])
    await react(client, b, ch, m["id"], THUMBS)


@pytest.mark.parametrize("emoji", ["<:party:123456>", "party:123456"])
async def test_unknown_custom_emoji_is_422(client, accounts, rt, emoji, capture_events):
    _, ch, (a,) = await gathering(client, accounts, rt)
    m = await post(client, a, ch)
    await capture_events.reset()
    for method in ("PUT", "DELETE", "GET"):
        r = await client.request(method, reaction_url(ch, m["id"], emoji), headers=a.headers)
        assert r.status_code == 422 and err(r)["code"] == "reaction.invalid_emoji", method
    await capture_events.settle()
    assert capture_events.of_type("MESSAGE_REACTION_ADD") == []


@pytest.mark.parametrize("emoji", [
    "abc", "x", "1", ":)", "<:a:1>", "<:party:>", "<:party:12a>", "<a:party:1>", "party:", ":party:1",
    THUMBS + THUMBS, THUMBS + " ", "\u200d" + THUMBS, THUMBS + "\u200d", "\u00e9", "\ufe0f",
    "\U0001F1E6", "\U0001F468" + "\u200d\U0001F468" * 16,
])
async def test_malformed_emoji_is_422(client, accounts, rt, emoji):
    _, ch, (a,) = await gathering(client, accounts, rt)
    m = await post(client, a, ch)
    for method in ("PUT", "DELETE", "GET"):
        r = await client.request(method, reaction_url(ch, m["id"], emoji), headers=a.headers)
        assert r.status_code == 422 and err(r)["code"] == "reaction.invalid_emoji", (method, emoji)


async def test_denied_add_reactions_by_room_override(client, accounts, rt):
    guild, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    m = await post(client, a, ch)
    await react(client, b, ch, m["id"], THUMBS)
    r = await client.put(f"{API}/channels/{ch}/permissions/{guild['id']}", json={"type": "role", "deny": "ADD_REACTIONS"},
                         headers=a.headers)
    assert r.status_code == 204, r.text
    r = await react(client, b, ch, m["id"], GRIN, expect=403)
    assert err(r)["code"] == "perm.denied" and err(r)["permission"] == "ADD_REACTIONS"
    await unreact(client, b, ch, m["id"], THUMBS)  # removing one's own needs no permission
    r = await client.get(reaction_url(ch, m["id"], GRIN), headers=b.headers)
    assert r.status_code == 200
    await react(client, a, ch, m["id"], GRIN)  # the owner holds everything


async def test_read_message_history_is_required(client, accounts, rt):
    guild, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    m = await post(client, a, ch)
    r = await client.put(f"{API}/channels/{ch}/permissions/{guild['id']}",
                         json={"type": "role", "deny": "READ_MESSAGE_HISTORY"}, headers=a.headers)
    assert r.status_code == 204, r.text
    for method in ("PUT", "GET"):
        r = await client.request(method, reaction_url(ch, m["id"], THUMBS), headers=b.headers)
        assert r.status_code == 403 and err(r)["permission"] == "READ_MESSAGE_HISTORY", method


async def test_unseen_rooms_and_messages_are_404(client, accounts, rt):
    guild, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    outsider = await accounts.register("mallory")
    m = await post(client, a, ch)
    r = await client.post(f"{API}/guilds/{guild['id']}/channels", json={"name": "other", "type": "text"},
                          headers=a.headers)
    other = r.json()["channel"]["id"]
    elsewhere = await post(client, a, other)
    for method in ("PUT", "DELETE", "GET"):
        r = await client.request(method, reaction_url(ch, m["id"], THUMBS), headers=outsider.headers)
        assert r.status_code == 404 and err(r)["code"] == "channel.not_found", method
        for mid in (elsewhere["id"], "999999", "nope"):
            r = await client.request(method, reaction_url(ch, mid, THUMBS), headers=b.headers)
            assert r.status_code == 404 and err(r)["code"] == "message.not_found", (method, mid)
    r = await client.delete(reaction_url(ch, elsewhere["id"], THUMBS, a.id), headers=a.headers)
    assert r.status_code == 404 and err(r)["code"] == "message.not_found"
    # A hidden room answers 404 like a missing one.
    await client.put(f"{API}/channels/{other}/permissions/{guild['id']}", json={"type": "role", "deny": "VIEW_CHANNEL"},
                     headers=a.headers)
    r = await client.put(reaction_url(other, elsewhere["id"], THUMBS), headers=b.headers)
    assert r.status_code == 404 and err(r)["code"] == "channel.not_found"


async def test_moderator_removes_someones_reaction(client, accounts, rt, capture_events):
    guild, ch, (a, b, c) = await gathering(client, accounts, rt, "bob", "carol")
    m = await post(client, c, ch)
    await react(client, b, ch, m["id"], THUMBS)
    await react(client, c, ch, m["id"], THUMBS)
    r = await client.delete(reaction_url(ch, m["id"], THUMBS, c.id), headers=b.headers)
    assert r.status_code == 403 and err(r)["permission"] == "MANAGE_MESSAGES"
    await capture_events.reset()
    r = await client.delete(reaction_url(ch, m["id"], THUMBS, b.id), headers=a.headers)
    assert r.status_code == 204, r.text
    await capture_events.settle()
    [removed] = capture_events.of_type("MESSAGE_REACTION_REMOVE")
    assert removed.data == {"channel_id": ch, "guild_id": guild["id"], "message_id": m["id"], "user_id": b.id,
                            "emoji": THUMBS}
    assert set(removed.users) == {int(a.id), int(b.id), int(c.id)}
    assert (await message_of(client, b, ch, m["id"]))["reactions"] == [{"emoji": THUMBS, "count": 1, "me": False}]
    await capture_events.reset()
    r = await client.delete(reaction_url(ch, m["id"], THUMBS, b.id), headers=a.headers)
    assert r.status_code == 204  # nothing left to remove: no event
    r = await client.delete(reaction_url(ch, m["id"], THUMBS, "not-an-id"), headers=a.headers)
    assert r.status_code == 404 and err(r)["code"] == "user.not_found"
    r = await client.delete(reaction_url(ch, m["id"], "nope", b.id), headers=a.headers)
    assert r.status_code == 422 and err(r)["code"] == "reaction.invalid_emoji"
    await capture_events.settle()
    assert capture_events.of_type("MESSAGE_REACTION_REMOVE") == []


async def test_private_message_reactions_reach_only_its_two_parties(client, accounts, rt, capture_events):
    _, ch, (a, b, c) = await gathering(client, accounts, rt, "bob", "carol")
    m = await post(client, a, ch, f"/ls <@{b.id}> secret")
    assert m["kind"] == "private"
    await capture_events.reset()
    await react(client, b, ch, m["id"], THUMBS)
    await unreact(client, b, ch, m["id"], THUMBS)
    await react(client, a, ch, m["id"], HEART)
    await capture_events.settle()
    events = capture_events.of_type("MESSAGE_REACTION_ADD") + capture_events.of_type("MESSAGE_REACTION_REMOVE")
    assert len(events) == 3
    assert all(set(e.users) == {int(a.id), int(b.id)} for e in events)
    assert (await message_of(client, b, ch, m["id"]))["reactions"] == [{"emoji": HEART, "count": 1, "me": False}]
    for method in ("PUT", "DELETE", "GET"):
        r = await client.request(method, reaction_url(ch, m["id"], HEART), headers=c.headers)
        assert r.status_code == 404 and err(r)["code"] == "message.not_found", method
    r = await client.delete(reaction_url(ch, m["id"], HEART, a.id), headers=a.headers)
    assert r.status_code == 204  # the owner is one of the parties here


@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"reactions": "2/60"}}])
async def test_reactions_bucket(client, accounts, rt):
    _, ch, (a,) = await gathering(client, accounts, rt)
    m = await post(client, a, ch)
    await react(client, a, ch, m["id"], THUMBS)
    await unreact(client, a, ch, m["id"], THUMBS)
    r = await react(client, a, ch, m["id"], GRIN, expect=429)
    assert err(r)["code"] == "rate_limited" and err(r)["bucket"] == "reactions"
    r = await client.get(reaction_url(ch, m["id"], GRIN), headers=a.headers)
    assert r.status_code == 200  # listing is not in the bucket


async def test_requires_a_session(client, accounts, rt):
    _, ch, (a,) = await gathering(client, accounts, rt)
    m = await post(client, a, ch)
    r = await client.put(reaction_url(ch, m["id"], THUMBS))
    assert r.status_code == 401 and err(r)["code"] == "auth.unauthorized"


async def test_history_page_shows_reactions_exactly_where_they_are(client, accounts, rt):
    """Pages load reactions only for messages that ever had one (a flag set by the database): the
    flagged, the unflagged and a message whose last reaction was removed each show what they hold."""
    _, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    plain, reacted, emptied = [await post(client, a, ch, f"m{i}") for i in range(3)]
    await react(client, b, ch, reacted["id"], HEART)
    await react(client, a, ch, reacted["id"], HEART)
    await react(client, b, ch, emptied["id"], THUMBS)
    await unreact(client, b, ch, emptied["id"], THUMBS)

    r = await client.get(f"{API}/channels/{ch}/messages", params={"limit": 3}, headers=b.headers)
    shown = {m["id"]: m["reactions"] for m in r.json()["messages"]}
    assert shown == {plain["id"]: [], reacted["id"]: [{"emoji": HEART, "count": 2, "me": True}],
                     emptied["id"]: []}
    # A reaction written outside the service (here directly in the table) is flagged all the same.
    async with rt.engine.begin() as conn:
        await conn.execute(insert(reactions), {"message_id": int(plain["id"]), "emoji": GRIN,
                                               "user_id": int(a.id), "created_at": rt.clock.now()})
    r = await client.get(f"{API}/channels/{ch}/messages", params={"limit": 3}, headers=b.headers)
    shown = {m["id"]: m["reactions"] for m in r.json()["messages"]}
    assert shown[plain["id"]] == [{"emoji": GRIN, "count": 1, "me": False}]

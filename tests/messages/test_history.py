"""GET /channels/{id}/messages and GET /channels/{id}/messages/{id} (OpenAPI: listMessages, getMessage), through HTTP."""

from __future__ import annotations

from datetime import timedelta

import pytest

from meadhall.core import permissions as perms
from tests.support.factories import time_out, update_default_permissions
from tests.support.guilds import override, room
from tests.support.http import denied, invalid, not_found
from tests.support.messages import history, post, url
from tests.support.personas import hall

P = perms.P


@pytest.fixture
def settings_overrides():
    return {"RATE_LIMITS": {"messages.send": "1000/1"}}


async def filled_room(client, h, count):
    """A fresh room holding its `channel_create` system message and `count` messages; oldest first."""
    r = await room(client, h.owner, h.id, name="log")
    system = (await history(client, h.owner, r["id"]))["messages"]
    assert [m["kind"] for m in system] == ["system"]
    sent = [await post(client, h.a if i % 2 else h.b, r["id"], f"m{i}") for i in range(count)]
    return r["id"], [system[0]["id"]] + [m["id"] for m in sent]


def id_list(page):
    return [m["id"] for m in page["messages"]]


async def test_newest_first_with_system_message_at_the_start(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    ch, ordered = await filled_room(client, h, 5)
    page = await history(client, h.b, ch)
    assert id_list(page) == ordered[::-1] and page["has_more"] is False
    assert [m["content"] for m in page["messages"][:5]] == ["m4", "m3", "m2", "m1", "m0"]
    system = page["messages"][-1]
    assert system["kind"] == "system" and system["author"] is None
    assert system["system_event"] == {"type": "channel_create", "user_id": h.owner.id, "actor_id": None, "via": None}
    assert system["content"] == "owner created this room."
    assert system["mentions"] == [] and system["mention_everyone"] is False


async def test_member_join_messages_in_the_system_room(client, accounts, rt):
    h = await hall(client, accounts, rt)
    msgs = (await history(client, h.a, h.general))["messages"]
    assert [m["system_event"]["type"] for m in msgs] == ["member_join", "member_join", "channel_create"]
    joined = msgs[0]
    assert joined["system_event"] == {"type": "member_join", "user_id": h.b.id, "actor_id": None, "via": "invite"}
    assert joined["content"] == "bob joined the server." and joined["author"] is None
    assert joined["kind"] == "system"


async def test_limit_and_has_more_at_the_edges(client, accounts, rt):
    h = await hall(client, accounts, rt)
    ch, ordered = await filled_room(client, h, 9)  # 10 messages in all
    newest = ordered[::-1]
    page = await history(client, h.a, ch, limit=3)
    assert id_list(page) == newest[:3] and page["has_more"] is True
    page = await history(client, h.a, ch, limit=10)
    assert id_list(page) == newest and page["has_more"] is False
    page = await history(client, h.a, ch, limit=9)
    assert id_list(page) == newest[:9] and page["has_more"] is True
    page = await history(client, h.a, ch, limit=100)
    assert id_list(page) == newest and page["has_more"] is False
    page = await history(client, h.a, ch, limit=1)
    assert id_list(page) == newest[:1] and page["has_more"] is True


async def test_default_limit_is_50(client, accounts, rt):
    h = await hall(client, accounts, rt)
    ch, ordered = await filled_room(client, h, 51)  # 52 in all
    page = await history(client, h.a, ch)
    assert id_list(page) == ordered[::-1][:50] and page["has_more"] is True


async def test_before_cursor_pages_backwards(client, accounts, rt):
    h = await hall(client, accounts, rt)
    ch, ordered = await filled_room(client, h, 9)
    newest = ordered[::-1]
    page = await history(client, h.a, ch, before=newest[2], limit=3)
    assert id_list(page) == newest[3:6] and page["has_more"] is True
    page = await history(client, h.a, ch, before=newest[6], limit=3)
    assert id_list(page) == newest[7:10] and page["has_more"] is False
    page = await history(client, h.a, ch, before=newest[7], limit=3)
    assert id_list(page) == newest[8:] and page["has_more"] is False
    page = await history(client, h.a, ch, before=ordered[0])
    assert page == {"messages": [], "has_more": False}
    # A cursor need not be an existing message: ids compare numerically.
    page = await history(client, h.a, ch, before=str(int(newest[0]) + 1), limit=2)
    assert id_list(page) == newest[:2] and page["has_more"] is True
    page = await history(client, h.a, ch, before="1")
    assert page == {"messages": [], "has_more": False}


async def test_after_cursor_returns_the_next_messages_newest_first(client, accounts, rt):
    h = await hall(client, accounts, rt)
    ch, ordered = await filled_room(client, h, 9)  # ordered[0] is the system message
    page = await history(client, h.a, ch, after=ordered[2], limit=3)
    assert id_list(page) == [ordered[5], ordered[4], ordered[3]] and page["has_more"] is True
    page = await history(client, h.a, ch, after=ordered[6], limit=3)
    assert id_list(page) == [ordered[9], ordered[8], ordered[7]] and page["has_more"] is False
    page = await history(client, h.a, ch, after=ordered[7], limit=3)
    assert id_list(page) == [ordered[9], ordered[8]] and page["has_more"] is False
    page = await history(client, h.a, ch, after=ordered[9])
    assert page == {"messages": [], "has_more": False}
    page = await history(client, h.a, ch, after="0", limit=2)
    assert id_list(page) == [ordered[1], ordered[0]] and page["has_more"] is True
    page = await history(client, h.a, ch, after=ordered[0])
    assert id_list(page) == ordered[1:][::-1] and page["has_more"] is False


async def test_paging_through_everything_both_ways(client, accounts, rt):
    h = await hall(client, accounts, rt)
    ch, ordered = await filled_room(client, h, 11)
    seen, cursor = [], None
    while True:
        params = {"limit": 5} | ({"before": cursor} if cursor else {})
        page = await history(client, h.a, ch, **params)
        seen += id_list(page)
        if not page["has_more"]:
            break
        cursor = page["messages"][-1]["id"]
    assert seen == ordered[::-1]
    seen, cursor = [], "0"
    while True:
        page = await history(client, h.a, ch, after=cursor, limit=5)
        seen = id_list(page) + seen
        if not page["has_more"]:
            break
        cursor = page["messages"][0]["id"]
    assert seen == ordered[::-1]


async def test_query_refusals(client, accounts, rt):
    h = await hall(client, accounts, rt)
    ch, ordered = await filled_room(client, h, 2)
    for params, field in [
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"limit": -1}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"before": "abc"}, "before"),
        ({"after": "12x"}, "after"),
        ({"before": "-5"}, "before"),
        ({"before": ordered[1], "after": ordered[0]}, "before"),
    ]:
        r = await client.get(url(ch), params=params, headers=h.a.headers)
        invalid(r, field)


async def test_without_read_message_history_is_403(client, accounts, rt):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, "hello")
    await update_default_permissions(rt, h.id, perms.DEFAULT & ~P.READ_MESSAGE_HISTORY)
    denied(await client.get(url(h.general), headers=h.b.headers), "READ_MESSAGE_HISTORY")
    denied(await client.get(url(h.general, f"/{m['id']}"), headers=h.b.headers), "READ_MESSAGE_HISTORY")
    # Sending needs no history; the owner still reads.
    await post(client, h.b, h.general, "I can still talk")
    assert (await history(client, h.owner, h.general))["messages"][0]["author"]["id"] == h.b.id


async def test_read_message_history_by_room_override(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.id, "role", deny="READ_MESSAGE_HISTORY")
    denied(await client.get(url(h.general), headers=h.a.headers), "READ_MESSAGE_HISTORY")
    await override(client, h.owner, h.general, h.a.id, "member", allow="READ_MESSAGE_HISTORY")
    await history(client, h.a, h.general)


async def test_unseen_room_history_is_404(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.a.id, "member", deny="VIEW_CHANNEL")
    not_found(await client.get(url(h.general), headers=h.a.headers), "channel.not_found")
    not_found(await client.get(url(h.general), headers=h.outsider.headers), "channel.not_found")
    not_found(await client.get(url("123456"), headers=h.b.headers), "channel.not_found")
    not_found(await client.get(url("general"), headers=h.b.headers), "channel.not_found")


async def test_category_has_no_history(client, accounts, rt):
    h = await hall(client, accounts, rt)
    cat = await room(client, h.owner, h.id, name="cat", type="category")
    r = await client.get(url(cat["id"]), headers=h.owner.headers)
    assert r.status_code == 422 and r.json()["error"]["code"] == "channel.wrong_type"


async def test_timed_out_member_still_reads(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, "before the timeout")
    await time_out(rt, h.id, h.b, clock.now() + timedelta(hours=2))
    assert (await history(client, h.b, h.general))["messages"][0]["id"] == m["id"]


async def test_get_single_message(client, accounts, rt):
    h = await hall(client, accounts, rt)
    other = await room(client, h.owner, h.id, name="other")
    m = await post(client, h.a, h.general, "find me")
    r = await client.get(url(h.general, f"/{m['id']}"), headers=h.b.headers)
    assert r.status_code == 200 and r.json() == {"message": m}
    not_found(await client.get(url(h.general, "/123456789"), headers=h.b.headers), "message.not_found")
    not_found(await client.get(url(h.general, "/not-an-id"), headers=h.b.headers), "message.not_found")
    not_found(await client.get(url(h.general, "/-1"), headers=h.b.headers), "message.not_found")
    # Scoped by room: the id of a message in another room is unknown here.
    not_found(await client.get(url(other["id"], f"/{m['id']}"), headers=h.b.headers), "message.not_found")
    not_found(await client.get(url(h.general, f"/{m['id']}"), headers=h.outsider.headers), "channel.not_found")


async def test_page_cost_does_not_grow_with_its_size(client, accounts, rt, assert_query_count):
    h = await hall(client, accounts, rt)
    r = await room(client, h.owner, h.id, name="busy")
    target = await post(client, h.a, r["id"], "target")
    for i in range(30):
        body = {"reply_to_id": target["id"]} if i % 3 == 0 else {}
        await post(client, [h.a, h.b, h.owner][i % 3], r["id"], f"m{i} <@{h.a.id}>", **body)
    costs = []
    for limit in (3, 30):  # both pages hold replies
        with assert_query_count(100) as statements:
            page = await history(client, h.b, r["id"], limit=limit)
        assert len(page["messages"]) == limit
        costs.append(len(statements))
    assert costs[0] == costs[1], costs

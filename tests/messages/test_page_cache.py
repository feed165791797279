"""Cached history pages (messages/page_cache.py): every change to a room's messages, made by the service,
by another node or directly in the database, shows in the next page; what changes without touching
messages (authors, later reactions) is read for every request; private messages stay per viewer."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from meadhall.db.schema import messages
from meadhall.messages import page_cache
from tests.support.messages import history, post, url
from tests.support.nodes import second_node
from tests.support.personas import hall

API = "/api/v1"
HEART = "\u2764\ufe0f"


@pytest.fixture
def settings_overrides():
    return {"RATE_LIMITS": {"messages.send": "1000/1"}}


def contents(page):
    return [m["content"] for m in page["messages"]]


async def test_edits_pins_deletions_and_new_messages_show_in_the_next_page(client, accounts, rt):
    h = await hall(client, accounts, rt)
    first = await post(client, h.a, h.general, "first")
    second = await post(client, h.a, h.general, "second")
    assert contents(await history(client, h.b, h.general, limit=2)) == ["second", "first"]

    r = await client.patch(url(h.general, f"/{first['id']}"), json={"content": "first, edited"}, headers=h.a.headers)
    assert r.status_code == 200, r.text
    page = await history(client, h.b, h.general, limit=2)
    assert contents(page) == ["second", "first, edited"] and page["messages"][1]["edited_at"] is not None

    r = await client.put(f"{API}/channels/{h.general}/pins/{second['id']}", headers=h.owner.headers)
    assert r.status_code == 204, r.text
    assert [m["pinned"] for m in (await history(client, h.b, h.general, limit=2))["messages"]] == [True, False]

    await post(client, h.b, h.general, "third")
    assert contents(await history(client, h.b, h.general, limit=2)) == ["third", "second"]

    r = await client.delete(url(h.general, f"/{second['id']}"), headers=h.a.headers)
    assert r.status_code == 204, r.text
    assert contents(await history(client, h.b, h.general, limit=2)) == ["third", "first, edited"]


async def test_a_change_made_directly_in_the_database_shows_too(client, accounts, rt):
    """The room version is kept by triggers, not by the service."""
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, "before")
    assert contents(await history(client, h.b, h.general, limit=1)) == ["before"]
    async with rt.engine.begin() as conn:
        await conn.execute(update(messages).where(messages.c.id == int(m["id"])).values(content="after"))
    assert contents(await history(client, h.b, h.general, limit=1)) == ["after"]


async def test_authors_and_reactions_are_current_in_a_cached_page(client, accounts, rt):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, "hello")
    reaction = f"{url(h.general, '/' + m['id'])}/reactions/%E2%9D%A4%EF%B8%8F"
    assert (await client.put(reaction, headers=h.a.headers)).status_code == 204
    page = await history(client, h.b, h.general, limit=1)
    assert page["messages"][0]["reactions"] == [{"emoji": HEART, "count": 1, "me": False}]

    # Neither a second reaction nor a profile change touches the message row.
    assert (await client.put(reaction, headers=h.b.headers)).status_code == 204
    r = await client.patch(f"{API}/users/@me", json={"display_name": "Alice Renamed"}, headers=h.a.headers)
    assert r.status_code == 200, r.text
    shown = (await history(client, h.b, h.general, limit=1))["messages"][0]
    assert shown["reactions"] == [{"emoji": HEART, "count": 2, "me": True}]
    assert shown["author"]["display_name"] == "Alice Renamed"
    # `me` is the reader's own.
    shown = (await history(client, h.owner, h.general, limit=1))["messages"][0]
    assert shown["reactions"] == [{"emoji": HEART, "count": 2, "me": False}]


async def test_a_page_without_reactions_gives_every_reader_its_answer_with_the_authors_as_they_are(client, accounts, rt):
    """The kept answer of a page (its bytes, page_cache.Entry.shown) serves the next reader only while the authors
    it shows are unchanged, and never a page whose reactions carry the reader's `me`."""
    h = await hall(client, accounts, rt)
    await post(client, h.a, h.general, "hello")
    await post(client, h.owner, h.general, "hi")
    path = f"{API}/channels/{h.general}/messages?limit=2"
    first = await client.get(path, headers=h.b.headers)
    again = await client.get(path, headers=h.owner.headers)
    assert first.status_code == again.status_code == 200
    assert again.content == first.content and again.headers["content-type"] == "application/json"
    assert [m["author"]["username"] for m in first.json()["messages"]] == ["owner", "alice"]

    r = await client.patch(f"{API}/users/@me", json={"display_name": "Alice Renamed"}, headers=h.a.headers)
    assert r.status_code == 200, r.text
    renamed = (await client.get(path, headers=h.b.headers)).json()
    assert [m["author"]["display_name"] for m in renamed["messages"]][1] == "Alice Renamed"
    assert renamed["has_more"] == first.json()["has_more"]


async def test_private_messages_stay_per_viewer_whoever_reads_first(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await post(client, h.a, h.general, "public")
    # The room has no private message yet: one shared page, read first by the owner.
    assert contents(await history(client, h.owner, h.general, limit=2))[0] == "public"
    private = await post(client, h.a, h.general, f"/ls <@{h.b.id}> secret")
    await post(client, h.b, h.general, "a public reply", reply_to_id=private["id"])
    for reader in (h.owner, h.b, h.a, h.owner):  # a third party first, then the parties, then again
        page = (await history(client, reader, h.general, limit=3))["messages"]
        party = reader is not h.owner
        assert [m["content"] for m in page][:2] == (["a public reply", "secret"] if party else ["a public reply", "public"])
        reference = page[0]["referenced_message"]
        assert (reference["id"] == private["id"]) if party else reference is None


async def test_a_node_sees_changes_made_on_another(client, accounts, rt, settings, clock):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, "one")
    assert contents(await history(client, h.b, h.general, limit=1)) == ["one"]
    async with second_node(settings, rt, clock) as node_b:
        r = await node_b.patch(url(h.general, f"/{m['id']}"), json={"content": "one, edited on B"},
                               headers=h.a.headers)
        assert r.status_code == 200, r.text
        assert contents(await history(client, h.b, h.general, limit=1)) == ["one, edited on B"]
        await post(node_b, h.a, h.general, "two, sent on B")
        assert contents(await history(client, h.b, h.general, limit=2)) == ["two, sent on B", "one, edited on B"]


async def test_the_cache_keeps_at_most_its_bound(client, accounts, rt, monkeypatch):
    monkeypatch.setattr(page_cache.PAGES, "max_size", 2)
    page_cache.PAGES.clear()
    h = await hall(client, accounts, rt)
    for i in range(4):
        await post(client, h.a, h.general, f"m{i}")
    for limit in (1, 2, 3, 1):
        assert contents(await history(client, h.b, h.general, limit=limit)) == [f"m{3 - i}" for i in range(limit)]
        assert len(page_cache.PAGES) <= 2

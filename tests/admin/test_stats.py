"""Instance statistics (docs/admin.md, "Statistics"; OpenAPI: getInstanceStats) against a known history:
accounts and messages made on chosen days (ids follow the moved clock, as they follow the wall clock in
service), a day without either, banned, deleted and invisible accounts, a conversation whose messages count
in the totals but in no server, and a file."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlalchemy import update

from meadhall.db.schema import users
from tests.support.admin import admin_account, say
from tests.support.conversations import open_dm
from tests.support.files import attach
from tests.support.guilds import make_guild
from tests.support.http import Api, assert_error, invalid
from tests.support.shapes import GUILD_FIELDS


def day(d: datetime, offset: int = 0) -> str:
    return (d + timedelta(days=offset)).date().isoformat()


async def set_seen(rt, account, when, **values):
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(account.id)).values(last_seen_at=when, **values))


@pytest.fixture
async def history(client, accounts, rt, clock, start):
    """Day 0: root, alice, bob; servers Busy (alice) and Quiet (bob), one system message each; alice says 3 in
    Busy; an 11-byte file. Day 1: carol; a conversation of alice and carol with 2 messages. Day 2: nothing.
    Day 3: dave (banned), erin (deleted), frank; bob says 4 in Quiet, alice 1 in Busy."""
    api = Api(client)
    root = await admin_account(client, accounts, rt, "root")
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    busy = await make_guild(client, alice, "Busy")
    quiet = await make_guild(client, bob, "Quiet")
    await say(client, clock, alice, busy["system_channel_id"], 3)
    assert (await attach(client, alice, busy["system_channel_id"])).status_code == 201
    clock.set(start + timedelta(days=1))
    carol = await accounts.register("carol")
    conv = await open_dm(api, alice, carol)
    await say(client, clock, alice, conv["id"], 1)
    await say(client, clock, carol, conv["id"], 1)
    clock.set(start + timedelta(days=3))
    dave, erin, frank = [await accounts.register(n) for n in ("dave", "erin", "frank")]
    await say(client, clock, bob, quiet["system_channel_id"], 4)
    await say(client, clock, alice, busy["system_channel_id"], 1)
    now = clock.now()
    await set_seen(rt, root, now)
    await set_seen(rt, alice, now - timedelta(minutes=1))  # online
    await set_seen(rt, bob, now - timedelta(days=3))
    await set_seen(rt, carol, now - timedelta(minutes=1), status="invisible")
    await set_seen(rt, dave, now - timedelta(minutes=1), banned_at=now, ban_reason="spam")
    await set_seen(rt, erin, now, deleted_at=now)
    await set_seen(rt, frank, now - timedelta(days=20))
    return {"root": root, "alice": alice, "busy": busy, "quiet": quiet}


async def test_three_days(client, start, history):
    stats = (await Api(client).get("/instance/stats?days=3", history["root"]))["stats"]
    assert stats["range"] == {"from": day(start, 1), "to": day(start, 3), "days": 3}
    assert stats["users"] == {"total": 7, "banned": 1, "deleted": 1, "growth": [
        {"date": day(start, 1), "new": 1, "total": 4},
        {"date": day(start, 2), "new": 0, "total": 4},
        {"date": day(start, 3), "new": 3, "total": 7},
    ]}
    assert stats["messages"] == {"total": 12, "growth": [
        {"date": day(start, 1), "new": 2, "total": 7},
        {"date": day(start, 2), "new": 0, "total": 7},
        {"date": day(start, 3), "new": 5, "total": 12},
    ]}
    assert stats["activity"] == {"online_now": 2, "active_1d": 4, "active_7d": 5, "active_30d": 6}
    storage = stats["storage"]
    assert storage["files_count"] == 1 and storage["files_bytes"] == 11 and storage["database_bytes"] > 0
    # The conversation's two messages are in no server: Quiet 4, Busy 1.
    top = stats["top_guilds"]
    assert [(t["guild"]["name"], t["messages"], t["members"]) for t in top] == [("Quiet", 4, 1), ("Busy", 1, 1)]
    assert set(top[0]["guild"]) == GUILD_FIELDS and top[0]["guild"]["id"] == history["quiet"]["id"]


async def test_the_range_reaches_back_to_the_first_day(client, start, history):
    stats = (await Api(client).get("/instance/stats?days=5", history["root"]))["stats"]
    assert stats["range"] == {"from": day(start, -1), "to": day(start, 3), "days": 5}
    assert [(g["date"], g["new"], g["total"]) for g in stats["users"]["growth"]] == [
        (day(start, -1), 0, 0), (day(start, 0), 3, 3), (day(start, 1), 1, 4), (day(start, 2), 0, 4),
        (day(start, 3), 3, 7)]
    assert [(g["new"], g["total"]) for g in stats["messages"]["growth"]] == [(0, 0), (5, 5), (2, 7), (0, 7), (5, 12)]
    # 5 messages each (system message included): the older server first.
    assert [(t["guild"]["name"], t["messages"]) for t in stats["top_guilds"]] == [("Busy", 5), ("Quiet", 5)]


async def test_one_day_and_the_default_of_thirty(client, start, history):
    api = Api(client)
    stats = (await api.get("/instance/stats?days=1", history["root"]))["stats"]
    assert stats["range"] == {"from": day(start, 3), "to": day(start, 3), "days": 1}
    assert stats["users"]["growth"] == [{"date": day(start, 3), "new": 3, "total": 7}]
    assert stats["messages"]["growth"] == [{"date": day(start, 3), "new": 5, "total": 12}]
    stats = (await api.get("/instance/stats", history["root"]))["stats"]
    assert stats["range"] == {"from": day(start, -26), "to": day(start, 3), "days": 30}
    assert len(stats["users"]["growth"]) == 30 and stats["users"]["growth"][-1]["total"] == 7
    assert stats["messages"]["growth"][0] == {"date": day(start, -26), "new": 0, "total": 0}


async def test_top_guilds_are_the_ten_busiest(client, accounts, rt, clock, start):
    root = await admin_account(client, accounts, rt, "root")
    owner = await accounts.register("owner")
    halls = []
    for i in range(12):
        halls.append(await make_guild(client, owner, f"Hall {i:02}"))
        clock.advance(400)  # under the server-creation rate limit, the same day still
    for i, hall in enumerate(halls):
        await say(client, clock, owner, hall["system_channel_id"], i)  # Hall 11 says the most
    stats = (await Api(client).get("/instance/stats?days=1", root))["stats"]
    assert [(t["guild"]["name"], t["messages"]) for t in stats["top_guilds"]] == [
        (f"Hall {i:02}", i + 1) for i in range(11, 1, -1)]
    assert stats["messages"]["total"] == 12 + sum(range(12))


async def test_refusals(client, accounts, rt):
    api, alice = Api(client), await accounts.register("alice")
    assert_error(await api.request("GET", "/instance/stats", alice, expect=None), 403, "perm.denied")
    root = await admin_account(client, accounts, rt, "root")
    for days in ("0", "366", "-1", "x", "1.5"):
        invalid(await api.request("GET", f"/instance/stats?days={days}", root, expect=None), "days")
    assert (await api.get("/instance/stats?days=365", root))["stats"]["range"]["days"] == 365


async def test_the_number_of_queries_does_not_grow_with_the_range(client, accounts, rt, assert_query_count):
    api, root = Api(client), await admin_account(client, accounts, rt, "root")
    await api.get("/instance/stats?days=1", root)  # the session's first use reads more than the stats do
    with assert_query_count(20) as one_day:
        await api.get("/instance/stats?days=1", root)
    with assert_query_count(20) as a_year:
        await api.get("/instance/stats?days=365", root)
    assert len(one_day) == len(a_year)

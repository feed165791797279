"""Instance statistics (docs/admin.md, "Statistics"; OpenAPI: getInstanceStats) stay exact as messages come and
go: after sends on two days, a message's deletion, a room's, a conversation's (the last but one participant
leaves), a server's, an account's (its messages stay) and a multi-row delete, the message total, the growth per
day and the busiest servers equal what counting the messages themselves gives."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select

from meadhall.core.ids import id_timestamp_ms
from meadhall.db.schema import channels, messages
from tests.support.admin import admin_account, say, sign_in_admin, user_url
from tests.support.conversations import group, leave, open_dm
from tests.support.guilds import make_guild, room
from tests.support.http import Api
from tests.support.messages import delete_message

RANGES = (1, 3)  # today only (day 0 is before it), and both days with one before them


async def counted(rt: Any, today: date, days: int) -> dict[str, Any]:
    """The figures of the last `days` days, counted from the messages themselves."""
    async with rt.engine.connect() as conn:
        rows = (await conn.execute(select(messages.c.id, channels.c.guild_id)
                                   .join(channels, channels.c.id == messages.c.channel_id))).all()
    made = [(datetime.fromtimestamp(id_timestamp_ms(i) / 1000, UTC).date(), g) for i, g in rows]
    first = today - timedelta(days=days - 1)
    per_day = Counter(d for d, _ in made)
    growth, running = [], sum(1 for d, _ in made if d < first)
    for offset in range(days):
        d = first + timedelta(days=offset)
        running += per_day[d]
        growth.append({"date": d.isoformat(), "new": per_day[d], "total": running})
    per_guild = Counter(str(g) for d, g in made if g is not None and first <= d <= today)
    top = sorted(per_guild.items(), key=lambda item: (-item[1], int(item[0])))
    return {"total": len(rows), "growth": growth, "top": top}


async def shown(api: Api, admin: Any, days: int) -> dict[str, Any]:
    stats = (await api.get(f"/instance/stats?days={days}", admin))["stats"]
    return {"total": stats["messages"]["total"], "growth": stats["messages"]["growth"],
            "top": [(t["guild"]["id"], t["messages"]) for t in stats["top_guilds"]]}


async def test_figures_follow_every_way_messages_go(client, accounts, rt, clock, start):
    api = Api(client)
    root = await admin_account(client, accounts, rt, "root")
    alice, bob, carol, dave = [await accounts.register(n) for n in ("alice", "bob", "carol", "dave")]
    busy, quiet = await make_guild(client, alice, "Busy"), await make_guild(client, bob, "Quiet")
    talk = await room(client, alice, busy["id"], name="talk")
    conv = await open_dm(api, alice, carol)
    trio = await group(api, dave, alice, carol)
    await say(client, clock, alice, busy["system_channel_id"], 3)
    await say(client, clock, alice, talk["id"], 2)
    await say(client, clock, bob, quiet["system_channel_id"], 2)
    await say(client, clock, carol, conv["id"], 2)
    clock.set(start + timedelta(days=1))
    await say(client, clock, alice, talk["id"], 2)
    busy_ids = await say(client, clock, alice, busy["system_channel_id"], 4)
    await say(client, clock, bob, quiet["system_channel_id"], 3)
    await say(client, clock, alice, conv["id"], 1)
    await say(client, clock, dave, trio["id"], 2)
    root = await sign_in_admin(client, rt, root)  # stepped up again at the moved clock
    today = clock.now().date()

    async def check(total: int) -> None:
        for days in RANGES:
            expected = await counted(rt, today, days)
            assert expected["total"] == total  # the step removed what it should
            assert await shown(api, root, days) == expected

    # Day 0: a system message per room created (Busy, Quiet, talk) and 3 + 2 + 2 + 2; day 1: 2 + 4 + 3 + 1 + 2.
    await check(24)
    await delete_message(client, alice, busy["system_channel_id"], busy_ids[0])
    await check(23)
    await api.delete(f"/channels/{talk['id']}", alice)
    await check(18)  # its system message and 4
    await leave(api, carol, conv)  # two minus one: the conversation goes with its messages
    await check(15)
    await api.delete(user_url(dave.id), root)  # messages of a deleted account stay; the group keeps two
    await check(15)
    await api.delete(f"/instance/guilds/{quiet['id']}", root)
    await check(9)  # Quiet's system message and 5
    async with rt.engine.begin() as conn:  # several rows in one statement (no API deletes in bulk)
        await conn.execute(delete(messages).where(messages.c.id.in_([int(i) for i in busy_ids[1:]])))
    await check(6)
    # Sending after the deletions counts on top of what is left, in a room that had rows of that day.
    await say(client, clock, alice, busy["system_channel_id"], 2)
    await check(8)

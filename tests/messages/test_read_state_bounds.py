"""Bounds of read marks (OpenAPI: listReadStates, ackChannel): mention counts stop at 100 (clients show "99+"), whether counted
by an acknowledgement or kept up at send time, and acknowledgements have their own rate-limit bucket."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update

from meadhall.core.limits import MENTION_COUNT_MAX
from meadhall.db.schema import messages, read_states
from meadhall.db.schema.messages import user_mentions
from tests.support.factories import add_member
from tests.support.guilds import make_guild
from tests.support.http import API
from tests.support.messages import ack


async def mention_count(client: Any, account: Any, channel_id: str) -> int:
    r = await client.get(f"{API}/users/@me/read-states", headers=account.headers)
    assert r.status_code == 200, r.text
    return {s["channel_id"]: s for s in r.json()["read_states"]}[channel_id]["mention_count"]


async def insert_mentions(rt: Any, guild_id: str, channel_id: str, author: Any, mentioned: Any, count: int
                          ) -> list[str]:
    """`count` messages by `author` naming `mentioned`, written directly (the send bucket allows 10), with the
    rows of `user_mentions` that a sent message has (docs/mentions.md)."""
    now = rt.clock.now()
    rows = [{"id": rt.ids.next(), "channel_id": int(channel_id), "guild_id": int(guild_id),
             "author_id": int(author.id), "content": f"<@{mentioned.id}> {i}", "content_norm": f"<@{mentioned.id}> {i}",
             "kind": "normal", "mentions": [mentioned.id], "mention_channels": [], "mention_everyone": False,
             "suppress_embeds": False, "pinned": False, "created_at": now} for i in range(count)]
    async with rt.engine.begin() as conn:
        await conn.execute(insert(messages), rows)
        await conn.execute(insert(user_mentions), [{"user_id": int(mentioned.id), "channel_id": int(channel_id),
                                                    "message_id": r["id"]} for r in rows])
    return [str(r["id"]) for r in rows]


async def setup(client: Any, accounts: Any, rt: Any) -> tuple[Any, Any, str, str]:
    owner, reader = await accounts.register("owner"), await accounts.register("reader")
    guild = await make_guild(client, owner)
    await add_member(rt, guild["id"], reader)
    return owner, reader, guild["id"], guild["system_channel_id"]


async def test_ack_counts_at_most_100_mentions(client, accounts, rt):
    owner, reader, guild_id, room = await setup(client, accounts, rt)
    r = await ack(client, reader, room)
    assert r.status_code == 200, r.text
    mark = r.json()["read_state"]["last_read_message_id"]
    ids = await insert_mentions(rt, guild_id, room, owner, reader, 150)

    r = await ack(client, reader, room, mark)  # back to before the 150 mentions: unread again
    assert r.status_code == 200, r.text
    assert r.json()["read_state"]["mention_count"] == MENTION_COUNT_MAX == 100
    assert await mention_count(client, reader, room) == 100
    # Below the cap the count is exact.
    r = await ack(client, reader, room, ids[109])
    assert r.json()["read_state"]["mention_count"] == 40
    r = await ack(client, reader, room)
    assert r.json()["read_state"]["mention_count"] == 0


async def test_mentions_sent_at_the_cap_keep_it_at_100(client, accounts, rt):
    owner, reader, guild_id, room = await setup(client, accounts, rt)
    assert (await ack(client, reader, room)).status_code == 200
    ids = await insert_mentions(rt, guild_id, room, owner, reader, 120)
    # The 120 were written behind the service's back: their count is set as sending them would have left it.
    async with rt.engine.begin() as conn:
        await conn.execute(update(read_states).where(read_states.c.user_id == int(reader.id))
                           .values(mention_count=MENTION_COUNT_MAX))

    r = await client.post(f"{API}/channels/{room}/messages", json={"content": f"<@{reader.id}> once more"},
                          headers=owner.headers)
    assert r.status_code == 201, r.text
    assert await mention_count(client, reader, room) == 100
    # A count at the cap stands for "more than 99": deleting one of 121 mentions leaves it there.
    r = await client.delete(f"{API}/channels/{room}/messages/{ids[0]}", headers=owner.headers)
    assert r.status_code == 204, r.text
    assert await mention_count(client, reader, room) == 100
    async with rt.engine.connect() as conn:
        stored = (await conn.execute(select(read_states.c.mention_count)
                                     .where(read_states.c.user_id == int(reader.id)))).scalar_one()
    assert stored == 100


async def test_ack_has_its_own_bucket(client, accounts, rt, clock):
    _owner, reader, _guild_id, room = await setup(client, accounts, rt)
    for _ in range(30):
        r = await ack(client, reader, room)
        assert r.status_code == 200, r.text
        assert r.headers["X-RateLimit-Bucket"] == "read_states.ack"
    r = await ack(client, reader, room)
    assert r.status_code == 429, r.text
    assert r.headers["X-RateLimit-Bucket"] == "read_states.ack"
    assert r.json()["error"]["code"] == "rate_limited" and r.json()["error"]["bucket"] == "read_states.ack"
    # 30 per 10 seconds: one more ack a third of a second later.
    clock.advance(10 / 30)
    assert (await ack(client, reader, room)).status_code == 200

"""Message workloads (issue 5 targets): sending with 16 senders and with one, and history pages with one
and eight readers. Setup: one guild made by the first prepared user, joined by the others through an
invitation, and a room seeded with messages for the history pages."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from bench.drivers import Context, OpError, Samples, Skip, expect
from bench.harness import ms, percentile
from bench.workloads import register, seeded_message_row

SENDERS = 16
SEED_MESSAGES = 300
PAGE = 50


def _auth(user: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {user['token']}"}


async def _seed_ids(ctx: Context) -> list[str]:
    """The history room's seeded message ids, oldest first (read once per bench run)."""
    if "history_ids" not in ctx.shared:
        room, owner = ctx.shared["history_room"], ctx.users()[0]
        ids: list[str] = []
        before: str | None = None
        async with ctx.http() as http:
            while True:
                params = "limit=100" + (f"&before={before}" if before else "")
                page = expect(await http.get(f"/api/v1/channels/{room}/messages?{params}", headers=_auth(owner)),
                              200).json()
                ids.extend(m["id"] for m in page["messages"] if m["kind"] == "normal")
                if not page["has_more"]:
                    break
                before = page["messages"][-1]["id"]
        ctx.shared["history_ids"] = ids[::-1]
    return ctx.shared["history_ids"]


async def _room_setup(ctx: Context) -> None:
    if "msg_room" in ctx.shared:
        return
    users = ctx.users()
    owner = users[0]
    async with ctx.http() as http:
        resp = await http.post("/api/v1/guilds", json={"name": "Bench hall"}, headers=_auth(owner))
        if resp.status_code == 404:
            raise Skip("skipped: POST /api/v1/guilds not available")
        guild = expect(resp, 201).json()["guild"]
        room = guild["system_channel_id"]
        invite = expect(await http.post(f"/api/v1/channels/{room}/invites", json={"max_uses": 0},
                                        headers=_auth(owner)), 201).json()["invite"]["code"]
        for user in users[1:]:
            expect(await http.post(f"/api/v1/invites/{invite}", headers=_auth(user)), 200)
        history = expect(await http.post(f"/api/v1/guilds/{guild['id']}/channels",
                                         json={"name": "history", "type": "text"}, headers=_auth(owner)),
                         201).json()["channel"]["id"]
        for i in range(SEED_MESSAGES):
            expect(await http.post(f"/api/v1/channels/{history}/messages",
                                   json={"content": f"seed message {i} with some words"}, headers=_auth(owner)), 201)
    ctx.shared["msg_room"] = room
    ctx.shared["history_room"] = history


async def _send(ctx: Context, concurrency: int) -> Samples:
    users = ctx.users()
    room = ctx.shared["msg_room"]
    async with ctx.http_pool(concurrency) as http:

        async def op(i: int) -> None:
            user = users[i % len(users)]
            resp = await http.post(f"/api/v1/channels/{room}/messages",
                                   json={"content": f"hello {i} from {user['username']}"}, headers=_auth(user))
            if resp.status_code != 201:
                raise OpError(f"send: HTTP {resp.status_code} {resp.text[:120]}")

        return await ctx.drive(op, concurrency=concurrency)


@register("messages_send", setup=_room_setup, needs_users=SENDERS,
          description="POST /channels/{id}/messages, 16 users sending concurrently into one room")
async def messages_send(ctx: Context) -> Samples:
    return await _send(ctx, SENDERS)


@register("messages_send_one", setup=_room_setup, needs_users=SENDERS,
          description="POST /channels/{id}/messages, one sender at a time (latency)")
async def messages_send_one(ctx: Context) -> Samples:
    return await _send(ctx, 1)


async def _history(ctx: Context, readers: int, *, cold: bool = False) -> Samples:
    users = ctx.users()
    room = ctx.shared["history_room"]
    # Cold: a different page each time, cycling through more pages than the server keeps cached
    # (messages/page_cache.py, 128), so that every page is built from the database.
    cursors = (await _seed_ids(ctx))[PAGE:] if cold else []
    async with ctx.http_pool(readers) as http:

        async def op(i: int) -> None:
            query = f"limit={PAGE}" + (f"&before={cursors[i % len(cursors)]}" if cold else "")
            resp = await http.get(f"/api/v1/channels/{room}/messages?{query}", headers=_auth(users[i % len(users)]))
            if resp.status_code != 200 or len(resp.json()["messages"]) != PAGE:
                raise OpError(f"history: HTTP {resp.status_code} {resp.text[:120]}")

        return await ctx.drive(op, concurrency=readers)


@register("history_one", setup=_room_setup, needs_users=SENDERS,
          description="GET /channels/{id}/messages?limit=50, one reader")
async def history_one(ctx: Context) -> Samples:
    return await _history(ctx, 1)


@register("history_eight", setup=_room_setup, needs_users=SENDERS,
          description="GET /channels/{id}/messages?limit=50, eight concurrent readers")
async def history_eight(ctx: Context) -> Samples:
    return await _history(ctx, 8)


@register("history_eight_cold", setup=_room_setup, needs_users=SENDERS,
          description="GET /channels/{id}/messages?limit=50&before=..., eight readers, every page a cache miss")
async def history_eight_cold(ctx: Context) -> Samples:
    return await _history(ctx, 8, cold=True)


# ---- acknowledging a room (OpenAPI: ackChannel) ------------------------------------------------------
#
# Two rooms of one guild, one of ACK_SMALL and one of ACK_BIG messages, written straight into the database (at
# the send rate the big one would take days), then ACK_MENTIONS mentions of the reader and one `@everyone` sent
# through the API after them. Each operation acknowledges one of the rooms at its oldest message, so that
# every other message of the room is after the read mark and counted: the worst case of an acknowledgement
# (marking a whole room unread). The rooms alternate; per-room p50/p95/p99 go to stderr, with the latency of
# another user's `GET /users/@me` asked at the same time (what a slow acknowledgement makes others wait).

ACK_SMALL = 100
ACK_BIG = 1_000_000
ACK_MENTIONS = 20
ACK_NODE = 1021  # the node bits of the seeded ids: never a live server's (1023 search, 1022 admin seed)


def _ack_rows(channel_id: int, guild_id: int, author_id: int, count: int, seq: int) -> Any:
    """`count` plain message rows, oldest first, in batches, with snowflake ids in the past."""
    from meadhall.core.ids import EPOCH_MS

    start_ms = int(time.time() * 1000) - count * 20 - 86_400_000
    batch: list[dict[str, Any]] = []
    for i in range(count):
        ms = start_ms + i * 20
        content = f"seeded message {i}"
        batch.append(seeded_message_row(((ms - EPOCH_MS) << 22) | (ACK_NODE << 12) | seq, channel_id, guild_id,
                                        author_id, content, content, ms))
        if len(batch) == 5_000:
            yield batch
            batch = []
    if batch:
        yield batch


async def _ack_seed(ctx: Context, rooms: dict[int, int], guild_id: int, author_id: int) -> dict[int, int]:
    """Bulk-insert each room's messages ({room id: count}); answers {room id: its oldest message id}."""
    from sqlalchemy import insert, text

    from meadhall.config import Settings
    from meadhall.db.engine import create_engine
    from meadhall.db.schema import messages

    settings = Settings(DATA_DIR=ctx.data_dir, DATABASE_URL=ctx.env.get("DATABASE_URL") or None,
                        SECRET_KEY=ctx.env["SECRET_KEY"])
    engine = create_engine(settings.database_url)
    started, oldest = time.perf_counter(), dict[int, int]()
    try:
        for seq, (room, count) in enumerate(rooms.items()):
            for batch in _ack_rows(room, guild_id, author_id, count, seq):
                oldest.setdefault(room, batch[0]["id"])
                async with engine.begin() as conn:
                    await conn.execute(insert(messages), batch)
        if engine.dialect.name == "postgresql":  # as the search setup: plan with the statistics of the load
            async with engine.begin() as conn:
                await conn.execute(text("ANALYZE"))
    finally:
        await engine.dispose()
    print(f"bench: ack: {sum(rooms.values())} messages written in {time.perf_counter() - started:.1f} s",
          file=sys.stderr, flush=True)
    return oldest


async def _ack_setup(ctx: Context) -> None:
    if "ack_rooms" in ctx.shared:
        return
    owner, reader = ctx.users()[:2]
    async with ctx.http() as http:
        resp = await http.post("/api/v1/guilds", json={"name": "Ack hall"}, headers=_auth(owner))
        if resp.status_code == 404:
            raise Skip("skipped: POST /api/v1/guilds not available")
        guild = expect(resp, 201).json()["guild"]
        invite = expect(await http.post(f"/api/v1/channels/{guild['system_channel_id']}/invites",
                                        json={"max_uses": 0}, headers=_auth(owner)), 201).json()["invite"]["code"]
        expect(await http.post(f"/api/v1/invites/{invite}", headers=_auth(reader)), 200)
        sizes: dict[int, int] = {}
        for size in (ACK_SMALL, ACK_BIG):
            room = expect(await http.post(f"/api/v1/guilds/{guild['id']}/channels",
                                          json={"name": f"ack-{size}", "type": "text"}, headers=_auth(owner)),
                          201).json()["channel"]["id"]
            sizes[int(room)] = size
        oldest = await _ack_seed(ctx, sizes, int(guild["id"]), int(owner["id"]))
        for room in sizes:
            for i in range(ACK_MENTIONS):
                expect(await http.post(f"/api/v1/channels/{room}/messages",
                                       json={"content": f"<@{reader['id']}> look {i}"}, headers=_auth(owner)), 201)
            expect(await http.post(f"/api/v1/channels/{room}/messages", json={"content": "@everyone hear"},
                                   headers=_auth(owner)), 201)
    ctx.shared["ack_rooms"] = [(str(room), sizes[room], str(oldest[room])) for room in sizes]


@register("messages_ack_million", setup=_ack_setup, needs_users=4, max_ops=100,
          description=f"POST /channels/{{id}}/ack at the oldest message, rooms of {ACK_SMALL} and {ACK_BIG} "
                      "messages in turn, one at a time, with another user's GET /users/@me beside")
async def messages_ack_million(ctx: Context) -> Samples:
    users, rooms = ctx.users(), ctx.shared["ack_rooms"]
    reader, other = users[1], users[2]
    by_room: dict[int, list[float]] = {size: [] for _, size, _ in rooms}
    profile: list[float] = []
    done = asyncio.Event()
    async with ctx.http_pool(2) as http:

        async def op(i: int) -> float:
            room, size, oldest = rooms[i % len(rooms)]
            started = time.perf_counter()
            resp = await http.post(f"/api/v1/channels/{room}/ack", json={"message_id": oldest}, headers=_auth(reader))
            elapsed = time.perf_counter() - started
            if resp.status_code != 200 or resp.json()["read_state"]["mention_count"] != ACK_MENTIONS + 1:
                raise OpError(f"ack: HTTP {resp.status_code} {resp.text[:120]}")
            by_room[size].append(elapsed)
            return elapsed

        async def beside() -> None:
            while not done.is_set():
                started = time.perf_counter()
                expect(await http.get("/api/v1/users/@me", headers=_auth(other)), 200)
                profile.append(time.perf_counter() - started)
                await asyncio.sleep(0.01)

        probe = asyncio.create_task(beside())
        try:
            samples = await ctx.drive(op, concurrency=1)
        finally:
            done.set()
            await probe
    for size, values in [*by_room.items(), ("GET /users/@me beside", profile)]:
        lat = sorted(values)
        figures = ", ".join(f"p{q} {ms(percentile(lat, q))} ms" for q in (50, 95, 99))
        label = f"room of {size} messages" if isinstance(size, int) else size
        print(f"bench: messages_ack_million [{label}] {len(lat)} ops: {figures}, max {ms(lat[-1]) if lat else None} ms",
              file=sys.stderr, flush=True)
    return samples

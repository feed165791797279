"""Message workloads (issue 5 targets): sending with 16 senders and with one, and history pages with one
and eight readers. Setup: one guild made by the first prepared user, joined by the others through an
invitation, and a room seeded with messages for the history pages."""

from __future__ import annotations

from typing import Any

from bench.workloads import Context, OpError, Samples, Skip, expect, register

SENDERS = 16
SEED_MESSAGES = 300
PAGE = 50


def _auth(user: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {user['token']}"}


async def _seed_ids(ctx: Context) -> list[str]:
    """The history room's seeded message ids, oldest first (read once per bench run)."""
    if "history_ids" not in ctx.shared:
        room, owner, ids, before = ctx.shared["history_room"], ctx.users()[0], [], None
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

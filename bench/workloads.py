"""The workload registry and the built-in workloads (plain HTTP, login, the gateway, message search).

A workload is an async function `fn(ctx) -> Samples` that performs `ctx.requests` operations (usually
through `ctx.drive(op)`, which runs them with `ctx.concurrency` workers and times each one; the load drivers
are in bench/drivers.py). Register it with `@register(name, ...)`; see docs/benchmarks.md, "Adding a workload".
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from bench.drivers import Context, HttpPool, Op, OpError, Samples, Skip, WsClient, expect

# ---- the registry ----------------------------------------------------------------------------------

WorkloadFn = Callable[[Context], Awaitable[Samples | list[float]]]
SetupFn = Callable[[Context], Awaitable[None]]


@dataclass(frozen=True)
class Workload:
    name: str
    fn: WorkloadFn
    description: str = ""
    setup: SetupFn | None = None  # once, after the server is ready, before the runs; may raise Skip
    needs_users: int = 0  # users made with `meadhall create-user --sessions` before the server starts
    max_ops: int | None = None  # cap on operations per run (expensive operations such as password hashing)
    # The server's own /metrics are read by the workload: the server then runs with METRICS_ENABLED=true,
    # which every request and delivery pays a little for, so only when a selected workload asks for it.
    metrics: bool = False


REGISTRY: dict[str, Workload] = {}


def register(name: str, *, description: str = "", setup: SetupFn | None = None, needs_users: int = 0,
             max_ops: int | None = None, metrics: bool = False) -> Callable[[WorkloadFn], WorkloadFn]:
    def decorate(fn: WorkloadFn) -> WorkloadFn:
        if name in REGISTRY:
            raise ValueError(f"workload {name!r} registered twice")
        REGISTRY[name] = Workload(name, fn, description or (fn.__doc__ or "").strip(), setup, needs_users,
                                  max_ops, metrics)
        return fn

    return decorate


# ---- plain HTTP --------------------------------------------------------------------------------------


def http_get(path: str, status: int = 200) -> WorkloadFn:
    """A workload that GETs `path` `ctx.requests` times and expects `status`."""

    async def fn(ctx: Context) -> Samples:
        async with ctx.http_pool() as http:

            async def op(_i: int) -> None:
                expect(await http.get(path), status)

            return await ctx.drive(op)

    return fn


register("healthz", description="GET /healthz (liveness; no database, outside the rate limiter)")(
    http_get("/healthz"))
register("readyz", description="GET /readyz (one SELECT 1 on the database, plus a Redis PING when set)")(
    http_get("/readyz"))
register("meta", description="GET /api/v1/meta (through the middleware and the `global` rate-limit bucket)")(
    http_get("/api/v1/meta"))


# ---- authentication ----------------------------------------------------------------------------------

LOGIN = "/api/v1/auth/login"


def _login_body(user: dict[str, Any]) -> dict[str, str]:
    return {"login": user["username"], "password": user["password"]}


async def _login_setup(ctx: Context) -> None:
    users = ctx.users()
    async with ctx.http() as client:
        resp = await client.post(LOGIN, json=_login_body(users[0]))
    if resp.status_code in (404, 405):
        raise Skip(f"skipped: POST {LOGIN} not available (HTTP {resp.status_code})")
    expect(resp, 200)
    if "token" not in resp.json():
        raise OpError(f"POST {LOGIN} answered 200 without a token")


# max_ops: one login costs about 0.12-0.19 s of server CPU (argon2) and the server completes about
# 4 per second here; 24 per run keeps `--runs 3` of this workload near 20 s.
@register("login", setup=_login_setup, needs_users=4, max_ops=24,
          description=f"POST {LOGIN} with username + password (argon2 verify, new session), 4 users in turn")
async def login(ctx: Context) -> Samples:
    users = ctx.users()
    # One login at a time: this workload measures the latency of a sign-in (the cost of the password
    # hash), not how logins queue behind each other on a two-core machine.
    async with ctx.http_pool(1) as http:  # pool clients keep no cookies: each login stands alone

        async def op(i: int) -> None:
            resp = expect(await http.post(LOGIN, json=_login_body(users[i % len(users)])), 200)
            if "token" not in resp.json():
                raise OpError("login answer without token")

        return await ctx.drive(op, concurrency=1)


# ---- WebSocket gateway (docs/gateway.md) -------------------------------------------------------------

GATEWAY = "/gateway?v=1&encoding=json"
OP_DISPATCH, OP_HEARTBEAT, OP_IDENTIFY, OP_INVALID_SESSION, OP_HELLO, OP_HEARTBEAT_ACK = 0, 1, 2, 9, 10, 11
# The server closes a connection (4008) above 120 client frames per 60 s; stay well below.
FRAMES_PER_CONNECTION = 100


async def identify(ws: WsClient, token: str, wait: float = 10.0) -> dict[str, Any]:
    """HELLO -> IDENTIFY -> READY; returns the READY frame. OpError on INVALID_SESSION."""
    hello = await ws.recv_json(wait)
    if hello.get("op") != OP_HELLO:
        raise OpError(f"expected HELLO (op 10), got op {hello.get('op')}")
    await ws.send_json({"op": OP_IDENTIFY, "d": {
        "token": token, "properties": {"os": "linux", "browser": "meadhall-bench", "device": "bench"}}})
    frame = await ws.recv_until(
        lambda f: f.get("op") == OP_INVALID_SESSION or (f.get("op") == OP_DISPATCH and f.get("t") == "READY"),
        wait)
    if frame.get("op") == OP_INVALID_SESSION:
        raise OpError(f"IDENTIFY refused: INVALID_SESSION {frame.get('d')}")
    return dict(frame)


async def _gateway_setup(ctx: Context) -> None:
    await ctx.require_ws(GATEWAY)  # Skip first when the route is missing, whatever else is missing
    ctx.users()


@register("gateway_connect", setup=_gateway_setup, needs_users=4,
          description="open /gateway, HELLO, IDENTIFY, READY (latency = connect to READY), close")
async def gateway_connect(ctx: Context) -> Samples:
    users = ctx.users()

    async def op(i: int) -> float:
        started = time.perf_counter()
        async with ctx.ws(GATEWAY) as ws:
            await identify(ws, users[i % len(users)]["token"])
            return time.perf_counter() - started  # the close handshake is not part of the figure

    return await ctx.drive(op)


@register("gateway_heartbeat", setup=_gateway_setup, needs_users=4,
          description="HEARTBEAT -> HEARTBEAT_ACK round trips on identified connections (one per worker)")
async def gateway_heartbeat(ctx: Context) -> Samples:
    users = ctx.users()
    workers = max(1, min(ctx.concurrency, ctx.requests))
    connections = max(workers, math.ceil(ctx.requests / (FRAMES_PER_CONNECTION - 1)))
    pool: asyncio.Queue[WsClient] = asyncio.Queue()
    async with AsyncExitStack() as stack:
        for c in range(connections):
            ws = await stack.enter_async_context(ctx.ws(GATEWAY))
            await identify(ws, users[c % len(users)]["token"])
            pool.put_nowait(ws)

        async def op(_i: int) -> float:
            ws = await pool.get()
            try:
                _, seconds = await ws.round_trip({"op": OP_HEARTBEAT, "d": ws.last_seq},
                                                 lambda f: f.get("op") == OP_HEARTBEAT_ACK)
            finally:
                # A failed connection goes back too, so a broken pool shows as errors rather than a hang;
                # the pool holds enough connections that none runs out of frames before the run ends.
                if ws.frames_sent < FRAMES_PER_CONNECTION:
                    pool.put_nowait(ws)
            return float(seconds)

        return await ctx.drive(op, concurrency=workers)


# ---- message search (OpenAPI: searchMessages) ---------------------------------------------------------
#
# One room holding SEARCH_ROOM_MESSAGES messages written straight into the database (through the HTTP API
# this would take hours at the send rate); the search index follows through the triggers (SQLite) or the
# generated column and GIN indexes (PostgreSQL), as it would for sent messages. Queries run one at a time:
# the figures are the latency of a search, not of a queue of them.

SEARCH_ROOM_MESSAGES = 100_000
_SEARCH_WORDS = (
    "the and of to in is it that for on was with as you at be this have from or one had by word but not what "
    "all were we when your can said there use an each which she do how their if will up other about out many "
    "then them these so some her would make like him into time has look two more write go see number no way "
    "could people my than first water been call who oil its now find long down day did get come made may part "
    "mead hall hello world dragon winter feast king knight sword shield gold silver night morning mountain river "
    "forest village castle tower bridge harbour ship storm thunder lightning fire ice stone iron bread cheese "
    "honey ale song story message search server room channel voice friend guest stranger journey road market "
    "привет мир зима праздник король рыцарь меч золото ночь утро гора река лес деревня замок "
    "καλημέρα κόσμος δράκος χειμώνας βασιλιάς "
).split()
# Prefix queries end in a partial word; substring queries start and end inside words. 3+ characters each.
SEARCH_PREFIX_QUERIES = ("mead", "hel", "drag", "wint", "при", "кор", "hello wor", "the sto", "gold", "kni",
                         "feast hon", "silver moun", "δράκ", "mess", "light")
SEARCH_SUBSTRING_QUERIES = ("orl", "ead", "ountai", "ривет", "ragon", "ight", "ilve", "ssag", "arbou", "ello orl",
                            "нязь", "ράκο", "xylophone", "ormin", "unde")
# Words of one or two characters: below the trigram indexes, they are found by scanning the room.
SEARCH_SHORT_QUERIES = ("ha", "or", "ic", "dr", "зи", "qz", "the x", "me a", "жу", "y")


def seeded_message_row(message_id: int, channel_id: int, guild_id: int, author_id: int, content: str,
                       content_norm: str, at_ms: int) -> dict[str, Any]:
    """A plain message row written straight into `messages` by a workload's setup (no mentions, no files)."""
    from datetime import UTC, datetime

    return {
        "id": message_id, "channel_id": channel_id, "guild_id": guild_id,
        "author_id": author_id, "webhook_id": None, "webhook_name": None, "webhook_avatar": None,
        "content": content, "content_norm": content_norm, "kind": "normal", "recipient_id": None,
        "system_event": None, "nonce": None, "reply_to_id": None, "mentions": [], "mention_channels": [],
        "mention_everyone": False, "suppress_embeds": False, "pinned": False, "pinned_at": None,
        "created_at": datetime.fromtimestamp(at_ms / 1000, UTC), "edited_at": None,
    }


def _search_rows(channel_id: int, guild_id: int, author_id: int) -> Any:
    """SEARCH_ROOM_MESSAGES message rows, oldest first, in batches, with snowflake ids in the past."""
    import random

    from meadhall.core.ids import EPOCH_MS
    from meadhall.core.text import norm

    rng = random.Random(20261121)
    weights = [1 / (rank + 1) ** 0.8 for rank in range(len(_SEARCH_WORDS))]  # a few common words, a long tail
    start_ms = int(time.time() * 1000) - SEARCH_ROOM_MESSAGES * 5_000 - 86_400_000
    batch: list[dict[str, Any]] = []
    for i in range(SEARCH_ROOM_MESSAGES):
        ms = start_ms + i * 5_000
        content = " ".join(rng.choices(_SEARCH_WORDS, weights, k=rng.randint(3, 18)))
        if i % 7 == 0:
            content = content.capitalize()
        batch.append(seeded_message_row(((ms - EPOCH_MS) << 22) | (1023 << 12), channel_id, guild_id, author_id,
                                        content, norm(content), ms))
        if len(batch) == 5_000:
            yield batch
            batch = []
    if batch:
        yield batch


async def seed_search_room(ctx: Context, label: str, guild_name: str,
                           rows: Callable[[int, int, int], Any]) -> tuple[str, dict[str, Any]]:
    """A guild and a room created through the API (Skip when the server has no search), then the room's messages
    written straight into the database in the batches `rows(channel_id, guild_id, author_id)` yields.
    Returns (the room's id, its author)."""
    from sqlalchemy import insert, text

    from meadhall.config import Settings
    from meadhall.db.engine import create_engine
    from meadhall.db.schema import messages

    user = ctx.users()[0]
    auth = {"Authorization": f"Bearer {user['token']}"}
    async with ctx.http() as client:
        resp = await client.post("/api/v1/guilds", json={"name": guild_name}, headers=auth)
        if resp.status_code in (404, 405):
            raise Skip(f"skipped: POST /api/v1/guilds not available (HTTP {resp.status_code})")
        guild = expect(resp, 201).json()["guild"]
        resp = expect(await client.post(f"/api/v1/guilds/{guild['id']}/channels",
                                        json={"name": "archive", "type": "text"}, headers=auth), 201)
        channel_id = resp.json()["channel"]["id"]
        probe = await client.get(f"/api/v1/channels/{channel_id}/messages/search", params={"q": "x"}, headers=auth)
        if probe.status_code in (404, 405):
            raise Skip(f"skipped: GET /channels/{{id}}/messages/search not available (HTTP {probe.status_code})")
        expect(probe, 200)
    settings = Settings(DATA_DIR=ctx.data_dir, DATABASE_URL=ctx.env.get("DATABASE_URL") or None,
                        SECRET_KEY=ctx.env["SECRET_KEY"])
    engine = create_engine(settings.database_url)
    started, count = time.perf_counter(), 0
    try:
        for batch in rows(int(channel_id), int(guild["id"]), int(user["id"])):
            async with engine.begin() as conn:
                await conn.execute(insert(messages), batch)
            count += len(batch)
        if engine.dialect.name == "postgresql":
            # Autovacuum analyses a table within about a minute of such a load; the runs start sooner, and
            # planning with the statistics of an empty table would measure a state no server stays in.
            async with engine.begin() as conn:
                await conn.execute(text("ANALYZE messages"))
    finally:
        await engine.dispose()
    print(f"bench: {label}: {count} messages written in {time.perf_counter() - started:.1f} s",
          file=sys.stderr, flush=True)
    return channel_id, user


async def _search_setup(ctx: Context) -> None:
    """Create a guild and a room through the API, then bulk-insert the room's messages (once per bench)."""
    if "search_channel_id" in ctx.shared:
        return
    channel_id, user = await seed_search_room(ctx, "search", "search bench", _search_rows)
    ctx.shared["search_channel_id"] = channel_id
    ctx.shared["search_token"] = user["token"]


def _search_op(ctx: Context, http: HttpPool, groups: dict[str, tuple[str, ...]],
               by_group: dict[str, list[float]]) -> Op:
    channel, token = ctx.shared["search_channel_id"], ctx.shared["search_token"]
    plan = [(name, q) for name, queries in groups.items() for q in queries]

    async def op(i: int) -> float:
        group, q = plan[i % len(plan)]
        started = time.perf_counter()
        resp = expect(await http.get(f"/api/v1/channels/{channel}/messages/search",
                                     params={"q": q, "limit": 25}, headers={"Authorization": f"Bearer {token}"}))
        elapsed = time.perf_counter() - started
        if "messages" not in resp.json():
            raise OpError("search answer without messages")
        by_group[group].append(elapsed)
        return elapsed

    return op


def _report_groups(name: str, by_group: dict[str, list[float]]) -> None:
    """Per-group p50 / p95 / p99 of this run on stderr (the summary has p50 and p99 over all groups)."""
    from bench.harness import ms, percentile

    for group, values in by_group.items():
        lat = sorted(values)
        figures = ", ".join(f"p{q} {ms(percentile(lat, q))} ms" for q in (50, 95, 99))
        print(f"bench: {name} [{group}] {len(lat)} ops: {figures}, max {ms(lat[-1]) if lat else None} ms",
              file=sys.stderr, flush=True)


async def _search_workload(ctx: Context, name: str, groups: dict[str, tuple[str, ...]]) -> Samples:
    by_group: dict[str, list[float]] = {group: [] for group in groups}
    async with ctx.http_pool(1) as http:
        samples = await ctx.drive(_search_op(ctx, http, groups, by_group), concurrency=1)
    _report_groups(name, by_group)
    return samples


@register("search", setup=_search_setup, needs_users=4, max_ops=600,
          description=f"GET /channels/{{id}}/messages/search in a room of {SEARCH_ROOM_MESSAGES} messages: "
                      "prefix and substring queries (3+ characters per word) in turn, one at a time")
async def search(ctx: Context) -> Samples:
    return await _search_workload(ctx, "search", {"prefix": SEARCH_PREFIX_QUERIES,
                                                  "substring": SEARCH_SUBSTRING_QUERIES})


@register("search_short", setup=_search_setup, needs_users=4, max_ops=300,
          description=f"as `search`, with words of 1-2 characters (no trigram index: a scan of the room's "
                      f"{SEARCH_ROOM_MESSAGES} messages, newest first, until the page is full)")
async def search_short(ctx: Context) -> Samples:
    return await _search_workload(ctx, "search_short", {"short": SEARCH_SHORT_QUERIES})

"""The load drivers (HttpPool, WsClient, Context.drive), the workload registry and the built-in workloads.

A workload is an async function `fn(ctx) -> Samples` that performs `ctx.requests` operations (usually
through `ctx.drive(op)`, which runs them with `ctx.concurrency` workers and times each one). Register it
with `@register(name, ...)`; see docs/benchmarks.md, "Adding a workload".
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.harness import ServerProcess, run_cli
from bench.rawhttp import Connection, Response


class Skip(Exception):
    """Raised by a setup hook or a workload: the workload cannot run here; the message says why."""


class OpError(Exception):
    """One operation failed (unexpected status, bad frame); counted as an error, not fatal."""


# ---- load drivers -------------------------------------------------------------------------------------


@dataclass
class Samples:
    """What one run of a workload produced. Latencies in seconds, successful operations only."""

    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    error_examples: list[str] = field(default_factory=list)
    wall_s: float | None = None  # the load phase alone; the harness times the whole call otherwise

    def error(self, message: str) -> None:
        self.errors += 1
        if len(self.error_examples) < 5 and message not in self.error_examples:
            self.error_examples.append(message)


def expect(resp: Any, *statuses: int) -> Any:
    """`resp` (an httpx.Response or a bench/rawhttp.py Response) if its status is one of `statuses`."""
    if resp.status_code not in (statuses or (200,)):
        raise OpError(f"{resp.request.method} {resp.request.url.path}: HTTP {resp.status_code} "
                      f"{resp.text[:160]}")
    return resp


class WsClient:
    """A JSON WebSocket connection with receive timeouts and round-trip timing."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.frames_sent = 0
        self.frames_received = 0
        self.skipped = 0  # frames discarded by recv_until
        self.last_seq: int | None = None  # the last dispatch sequence number seen (for HEARTBEAT / RESUME)

    async def send_json(self, payload: Any) -> None:
        await self.conn.send(json.dumps(payload, separators=(",", ":")))
        self.frames_sent += 1

    async def recv_json(self, wait: float = 5.0) -> Any:
        """The next frame, decoded; OpError when none arrives within `wait` seconds."""
        try:
            raw = await asyncio.wait_for(self.conn.recv(), wait)
        except TimeoutError:
            raise OpError(f"no frame within {wait:.1f} s") from None
        self.frames_received += 1
        if isinstance(raw, bytes):
            raise OpError("binary frame received")
        frame = json.loads(raw)
        if isinstance(frame, dict) and isinstance(frame.get("s"), int):
            self.last_seq = frame["s"]
        return frame

    async def recv_until(self, predicate: Callable[[Any], bool], wait: float = 5.0) -> Any:
        """The first frame matching `predicate`; others (dispatches in between) are discarded."""
        deadline = time.perf_counter() + wait
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise OpError(f"no matching frame within {wait:.1f} s")
            frame = await self.recv_json(remaining)
            if predicate(frame):
                return frame
            self.skipped += 1

    async def round_trip(self, payload: Any, predicate: Callable[[Any], bool],
                         wait: float = 5.0) -> tuple[Any, float]:
        """Send `payload`, wait for the answer matching `predicate`; returns (answer, seconds)."""
        started = time.perf_counter()
        await self.send_json(payload)
        answer = await self.recv_until(predicate, wait)
        return answer, time.perf_counter() - started

    async def close(self) -> None:
        await self.conn.close()


def _upgrade_status(exc: Exception) -> int | None:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None) or getattr(exc, "status_code", None)
    return int(status) if status is not None else None


class HttpPool:
    """One keep-alive connection per concurrent worker, driven by the minimal client of bench/rawhttp.py.

    Why not httpx here: it costs about 0.8 ms of client CPU per request with one connection per client
    (and about 2 ms with one client of 16 connections), so a load generator on one core could not offer
    much more than 1,000 requests per second, below what the message targets ask of the server. The raw
    client costs a fraction of that. Connections keep no cookies: every request says who it is. Setup
    requests still use httpx (`Context.http`)."""

    def __init__(self, base_url: str, size: int, *, timeout: float = 30.0) -> None:
        self.clients = [Connection(base_url, timeout) for _ in range(size)]
        self._free: asyncio.Queue[Connection] = asyncio.Queue()
        for client in self.clients:
            self._free.put_nowait(client)

    @asynccontextmanager
    async def client(self) -> AsyncIterator[Connection]:
        """A connection for this operation alone (waits only when more ops run than the pool has)."""
        client = await self._free.get()
        try:
            yield client
        finally:
            self._free.put_nowait(client)

    async def request(self, method: str, url: str, **kwargs: Any) -> Response:
        client = await self._free.get()
        try:
            return await client.request(method, url, **kwargs)
        finally:
            self._free.put_nowait(client)

    async def get(self, url: str, **kwargs: Any) -> Response:
        return await self.request("GET", url, **kwargs)

    async def post(self, url: str, **kwargs: Any) -> Response:
        return await self.request("POST", url, **kwargs)

    async def put(self, url: str, **kwargs: Any) -> Response:
        return await self.request("PUT", url, **kwargs)

    async def patch(self, url: str, **kwargs: Any) -> Response:
        return await self.request("PATCH", url, **kwargs)

    async def aclose(self) -> None:
        await asyncio.gather(*(client.aclose() for client in self.clients))

    async def __aenter__(self) -> HttpPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


Op = Callable[[int], Awaitable[Any]]


class Context:
    """What a workload sees. One per workload; `requests` is already capped by the workload's max_ops."""

    def __init__(self, server: ServerProcess, *, requests: int, concurrency: int,
                 shared: dict[str, Any]) -> None:
        self.server = server
        self.base_url = server.base_url
        self.ws_url = server.ws_url
        self.data_dir = server.data_dir
        self.env = server.env
        self.requests = requests
        self.concurrency = concurrency
        self.shared = shared  # one dict for the whole bench run: users, setup results

    def for_workload(self, requests: int) -> Context:
        return Context(self.server, requests=requests, concurrency=self.concurrency, shared=self.shared)

    # -- HTTP
    def http(self, **kwargs: Any) -> httpx.AsyncClient:
        """A plain AsyncClient on the server (setup, probes, sequential steps; it keeps cookies)."""
        kwargs.setdefault("timeout", 30.0)
        return httpx.AsyncClient(base_url=self.base_url, trust_env=False, **kwargs)

    def http_pool(self, size: int | None = None, **kwargs: Any) -> HttpPool:
        """Clients for the load itself: one per concurrent worker (see HttpPool)."""
        return HttpPool(self.base_url, size or self.concurrency, **kwargs)

    # -- WebSocket
    @asynccontextmanager
    async def ws(self, path: str = "/gateway", *, open_timeout: float = 10.0,
                 **kwargs: Any) -> AsyncIterator[WsClient]:
        """A WsClient on `path`; raises Skip when the upgrade is refused with 403/404 (no such route:
        Starlette closes an unknown WebSocket route, which uvicorn answers with 403)."""
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidStatus

        kwargs.setdefault("compression", None)
        kwargs.setdefault("max_size", None)
        try:
            conn = await connect(self.ws_url + path, open_timeout=open_timeout, proxy=None, **kwargs)
        except InvalidStatus as exc:
            status = _upgrade_status(exc)
            if status in (403, 404):
                route = path.split("?", 1)[0]
                raise Skip(f"skipped: {route} not available (HTTP {status} at the WebSocket upgrade)") from None
            raise OpError(f"WebSocket upgrade of {path}: HTTP {status}") from None
        client = WsClient(conn)
        try:
            yield client
        finally:
            await client.close()

    async def require_ws(self, path: str = "/gateway") -> None:
        """Probe once: Skip when the route does not exist."""
        async with self.ws(path):
            pass

    # -- CLI (same environment and data directory as the server)
    async def cli(self, *args: str, limit: float = 300.0) -> tuple[int, str, str]:
        """`meadhall <args>` -> (exit code, stdout, stderr)."""
        return await run_cli(self.env, *args, limit=limit)

    def users(self) -> list[dict[str, Any]]:
        """Users made by `meadhall create-user --sessions` before the server started (Workload.needs_users).
        Raises Skip with the reason when they could not be created."""
        users = self.shared.get("users")
        if not users:
            raise Skip(self.shared.get("users_error") or "no users were prepared (set Workload.needs_users)")
        return list(users)

    # -- the load loop
    async def drive(self, op: Op, n: int | None = None, concurrency: int | None = None) -> Samples:
        """Run `op(i)` for i in range(n) with `concurrency` workers. Each op is timed; an op may return a
        float to report its own latency (seconds), e.g. a round trip measured after some preparation.
        Exceptions count as errors, except Skip, which stops the run and propagates."""
        n = self.requests if n is None else n
        workers = max(1, min(concurrency or self.concurrency, n))
        samples = Samples()
        indices = iter(range(n))
        skipped: list[Skip] = []

        async def worker() -> None:
            for i in indices:  # one shared iterator: next() never awaits, so no index runs twice
                if skipped:
                    return
                started = time.perf_counter()
                try:
                    result = await op(i)
                except Skip as exc:
                    skipped.append(exc)
                    return
                except Exception as exc:  # every failure is one counted error
                    samples.error(str(exc)[:200] or type(exc).__name__)
                    continue
                latency = time.perf_counter() - started
                samples.latencies.append(float(result) if isinstance(result, float) else latency)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(workers)))
        samples.wall_s = time.perf_counter() - started
        if skipped:
            raise skipped[0]
        return samples


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


async def _search_setup(ctx: Context) -> None:
    """Create a guild and a room through the API, then bulk-insert the room's messages (once per bench)."""
    if "search_channel_id" in ctx.shared:
        return
    from sqlalchemy import insert, text

    from meadhall.config import Settings
    from meadhall.db.engine import create_engine
    from meadhall.db.schema import messages

    user = ctx.users()[0]
    auth = {"Authorization": f"Bearer {user['token']}"}
    async with ctx.http() as client:
        resp = await client.post("/api/v1/guilds", json={"name": "search bench"}, headers=auth)
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
    started = time.perf_counter()
    try:
        for batch in _search_rows(int(channel_id), int(guild["id"]), int(user["id"])):
            async with engine.begin() as conn:
                await conn.execute(insert(messages), batch)
        if engine.dialect.name == "postgresql":
            # Autovacuum analyses a table within about a minute of such a load; the runs start sooner, and
            # planning with the statistics of an empty table would measure a state no server stays in.
            async with engine.begin() as conn:
                await conn.execute(text("ANALYZE messages"))
    finally:
        await engine.dispose()
    print(f"bench: search: {SEARCH_ROOM_MESSAGES} messages written in {time.perf_counter() - started:.1f} s",
          file=sys.stderr, flush=True)
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

"""The load drivers (HttpPool, WsClient, Context.drive), the workload registry and the built-in workloads.

A workload is an async function `fn(ctx) -> Samples` that performs `ctx.requests` operations (usually
through `ctx.drive(op)`, which runs them with `ctx.concurrency` workers and times each one). Register it
with `@register(name, ...)`; see docs/benchmarks.md, "Adding a workload".
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.harness import ServerProcess, run_cli


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


def expect(resp: httpx.Response, *statuses: int) -> httpx.Response:
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


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    def set_ok(self, cookie: Any, request: Any) -> bool:
        return False


class HttpPool:
    """One httpx.AsyncClient per concurrent worker, each with a single keep-alive connection.

    Why not one client with N connections: httpcore's pool costs more client CPU per request as it grows
    (about 2 ms at 16 connections against 0.8 ms at 1, measured here), and the load generator, not the
    server, became the bottleneck. Pool clients keep no cookies: every request says who it is."""

    def __init__(self, base_url: str, size: int, **kwargs: Any) -> None:
        kwargs.setdefault("timeout", 30.0)
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        self.clients = [httpx.AsyncClient(base_url=base_url, limits=limits, trust_env=False, **kwargs)
                        for _ in range(size)]
        self._free: asyncio.Queue[httpx.AsyncClient] = asyncio.Queue()
        for client in self.clients:
            client.cookies.jar.set_policy(_NoCookies())
            self._free.put_nowait(client)

    @asynccontextmanager
    async def client(self) -> AsyncIterator[httpx.AsyncClient]:
        """A client for this operation alone (waits only when more ops run than the pool has clients)."""
        client = await self._free.get()
        try:
            yield client
        finally:
            self._free.put_nowait(client)

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        async with self.client() as client:
            return await client.request(method, url, **kwargs)

    async def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return await self.request("GET", url, **kwargs)

    async def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return await self.request("POST", url, **kwargs)

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


REGISTRY: dict[str, Workload] = {}


def register(name: str, *, description: str = "", setup: SetupFn | None = None, needs_users: int = 0,
             max_ops: int | None = None) -> Callable[[WorkloadFn], WorkloadFn]:
    def decorate(fn: WorkloadFn) -> WorkloadFn:
        if name in REGISTRY:
            raise ValueError(f"workload {name!r} registered twice")
        REGISTRY[name] = Workload(name, fn, description or (fn.__doc__ or "").strip(), setup, needs_users,
                                  max_ops)
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


# ---- WebSocket gateway (API.md section 4) ------------------------------------------------------------

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

"""The load drivers: HttpPool (the load's HTTP clients), WsClient, and Context, whose `drive` runs a
workload's operations with `ctx.concurrency` workers and times each one.

Also what a workload reports (Samples) and raises (Skip, OpError). The registry and the built-in workloads
are in bench/workloads.py.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
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
    figures: dict[str, Any] = field(default_factory=dict)  # the workload's own figures, in the run's JSON

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

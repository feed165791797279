"""/readyz (the OpenAPI document): 200 ready with database and Redis checks matching the backend; 503 not_ready
naming the failing dependency when it really is unreachable. /healthz (liveness) stays 200.

Outages (docs/reference/errors.md): while Redis or the database is down (nothing listens) or hung (a server that
accepts connections and never answers), requests that need it answer 503 `service.unavailable` with
Retry-After within a few seconds: never a hang, never a 500."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from meadhall.app import create_app
from meadhall.config import Settings
from meadhall.runtime import Runtime

SECRET = "readiness-test-secret-0123456789abcdef"


async def test_ready_with_every_configured_dependency(client: httpx.AsyncClient, settings: Settings) -> None:
    r = await client.get("/readyz")
    assert r.status_code == 200, r.text
    expected_redis = "ok" if settings.REDIS_URL else "disabled"
    assert r.json() == {"status": "ready", "checks": {"database": "ok", "redis": expected_redis}}


def closed_port() -> int:
    """A local port nothing listens on (bound and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unreachable_sqlite(tmp_path: Path) -> str:
    # The database path is a directory: SQLite cannot open it, whoever runs the tests (even root).
    path = tmp_path / "data" / "chat.db"
    path.mkdir(parents=True)
    return f"sqlite:///{path}"


@pytest.fixture
async def make_client(tmp_path: Path) -> AsyncIterator[Any]:
    runtimes: list[Runtime] = []
    clients: list[httpx.AsyncClient] = []

    async def make(**values: Any) -> httpx.AsyncClient:
        settings = Settings(DATA_DIR=tmp_path / "data", SECRET_KEY=SECRET, **values)
        rt = Runtime(settings)
        runtimes.append(rt)
        transport = httpx.ASGITransport(app=create_app(settings, rt), raise_app_exceptions=False)
        c = httpx.AsyncClient(transport=transport, base_url="http://localhost")
        clients.append(c)
        return c

    yield make
    for c in clients:
        await c.aclose()
    for rt in runtimes:
        await rt.close()


@pytest.mark.parametrize("database", ["postgres_closed_port", "sqlite_unopenable"])
async def test_not_ready_when_the_database_is_unreachable(make_client: Any, tmp_path: Path, database: str) -> None:
    if database == "postgres_closed_port":
        url = f"postgresql://postgres@127.0.0.1:{closed_port()}/meadhall"
    else:
        url = unreachable_sqlite(tmp_path)
    client = await make_client(DATABASE_URL=url)

    r = await client.get("/readyz")

    assert r.status_code == 503, r.text
    assert r.json() == {"status": "not_ready", "checks": {"database": "error", "redis": "disabled"}}
    live = await client.get("/healthz")
    assert live.status_code == 200 and live.json() == {"status": "ok"}


async def test_not_ready_when_redis_is_unreachable(make_client: Any, tmp_path: Path) -> None:
    db = tmp_path / "data" / "chat.db"
    client = await make_client(DATABASE_URL=f"sqlite:///{db}", REDIS_URL=f"redis://127.0.0.1:{closed_port()}/0")

    r = await client.get("/readyz")

    assert r.status_code == 503, r.text
    assert r.json() == {"status": "not_ready", "checks": {"database": "ok", "redis": "error"}}


# ---------------------------------------------------------------- outages: 503, promptly

# The client timeouts (runtime.py) bound a hung dependency at a few seconds; this is the test's margin.
PROMPT = 9.0


@pytest.fixture
async def hung_port() -> AsyncIterator[int]:
    """A local server that accepts connections, reads what it is sent and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        while await reader.read(4096):
            pass

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    for writer in held:
        writer.close()
    server.close()


async def timed_get(client: httpx.AsyncClient, path: str, **kw: Any) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    r = await client.get(path, **kw)
    return r, time.monotonic() - started


def assert_unavailable(r: httpx.Response, elapsed: float) -> None:
    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == "service.unavailable"
    assert r.headers["Retry-After"] == "5"
    assert r.headers["x-request-id"]
    assert elapsed < PROMPT, f"answered after {elapsed:.1f} s"


@pytest.mark.parametrize("redis", ["closed_port", "hung"])
async def test_requests_answer_503_while_redis_is_down(make_client: Any, tmp_path: Path, hung_port: int,
                                                       redis: str) -> None:
    port = closed_port() if redis == "closed_port" else hung_port
    client = await make_client(DATABASE_URL=f"sqlite:///{tmp_path / 'data' / 'chat.db'}",
                               REDIS_URL=f"redis://127.0.0.1:{port}/0")

    # Every /api/v1 route takes a token of the `global` bucket, kept in Redis.
    r, elapsed = await timed_get(client, "/api/v1/meta")
    assert_unavailable(r, elapsed)
    r, elapsed = await timed_get(client, "/readyz")
    assert r.status_code == 503 and r.json()["checks"]["redis"] == "error" and elapsed < PROMPT
    assert (await client.get("/healthz")).status_code == 200


@pytest.mark.parametrize("database", ["closed_port", "hung"])
async def test_requests_answer_503_while_postgresql_is_down(make_client: Any, hung_port: int, database: str) -> None:
    port = closed_port() if database == "closed_port" else hung_port
    client = await make_client(DATABASE_URL=f"postgresql://postgres@127.0.0.1:{port}/meadhall")

    r, elapsed = await timed_get(client, "/api/v1/meta")  # reads the instance settings
    assert_unavailable(r, elapsed)
    if database == "hung":
        return  # (each request waits out the connect timeout; once is enough)
    # A session cannot be checked: 503 as well, not 401 (which would sign the client out).
    r, elapsed = await timed_get(client, "/api/v1/users/@me", headers={"Authorization": "Bearer some-token"})
    assert_unavailable(r, elapsed)


async def test_a_node_starting_against_a_hung_redis_fails_instead_of_hanging(tmp_path: Path, hung_port: int,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from meadhall.realtime import bus

    monkeypatch.setattr(bus, "START_TIMEOUT", 1.0)  # (10 s in service)
    settings = Settings(DATA_DIR=tmp_path / "data", SECRET_KEY=SECRET,
                        DATABASE_URL=f"sqlite:///{tmp_path / 'data' / 'chat.db'}",
                        REDIS_URL=f"redis://127.0.0.1:{hung_port}/0")
    rt = Runtime(settings)
    started = time.monotonic()
    try:
        with pytest.raises(TimeoutError):
            await rt.start(run_migrations=False)
        assert time.monotonic() - started < PROMPT
    finally:
        await rt.close()

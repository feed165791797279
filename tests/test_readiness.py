"""/readyz (API.md 3.1): 200 ready with database and Redis checks matching the backend; 503 not_ready
naming the failing dependency when it really is unreachable. /healthz (liveness) stays 200."""

from __future__ import annotations

import socket
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

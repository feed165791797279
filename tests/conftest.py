"""Test infrastructure: an app per test on a fresh SQLite file, and on PostgreSQL (+ Redis) when
TEST_DATABASE_URL (and TEST_REDIS_URL) are set; a movable clock; capture_events; assert_query_count."""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from sqlalchemy import event as sa_event

from meadhall.app import create_app
from meadhall.config import Settings
from meadhall.core.clock import MovableClock
from meadhall.db import dialect
from meadhall.db.engine import create_engine
from meadhall.db.migrate import migrate
from meadhall.gateway.protocol import Timing
from meadhall.realtime.events import Event
from meadhall.runtime import Runtime
from tests.support.gateway import GatewayServer
from tests.support.http import Api
from tests.support.livekit_standin import StandIn
from tests.support.outbound import confine
from tests.support.personas import Accounts
from tests.support.plain import documented_client
from tests.support.served import served
from tests.support.voice import MEDIA_KEY, MEDIA_SECRET


def _worker_database() -> None:
    """Under pytest-xdist each worker gets its own PostgreSQL database beside TEST_DATABASE_URL (tests
    empty the tables they use), created here before any test module reads the variable, dropped at the
    end of the worker's session."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    base = os.environ.get("TEST_DATABASE_URL")
    if not worker or not base or os.environ.get("MEADHALL_TEST_BASE_DATABASE_URL"):
        return
    from sqlalchemy.engine import make_url

    from tests.support.isolation import run_admin

    url = make_url(base)
    name = f"{url.database}_{worker}"
    run_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    run_admin(f'CREATE DATABASE "{name}"')
    os.environ["MEADHALL_TEST_BASE_DATABASE_URL"] = base
    os.environ["TEST_DATABASE_URL"] = url.set(database=name).render_as_string(hide_password=False)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    base = os.environ.get("MEADHALL_TEST_BASE_DATABASE_URL")
    current = os.environ.get("TEST_DATABASE_URL")
    if not base or not current or base == current:
        return
    from sqlalchemy.engine import make_url

    from tests.support.isolation import run_admin

    try:
        run_admin(f'DROP DATABASE IF EXISTS "{make_url(current).database}" WITH (FORCE)')
    except Exception:  # the CI drops its database anyway; a leftover worker database is harmless
        pass


_worker_database()
TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL") or None
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL") or None
TEST_SECRET = "test-secret-key-not-for-production-0123456789"

BACKENDS = ["sqlite"] + (["postgres"] if TEST_DATABASE_URL else [])


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migrated SQLite file, copied for every test (migrating per test would be slow)."""
    path = tmp_path_factory.mktemp("template") / "chat.db"

    async def go() -> None:
        engine = create_engine(f"sqlite+aiosqlite:///{path}")
        await migrate(engine)
        async with engine.connect() as conn:
            await conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        await engine.dispose()

    _run(go())
    return path


@pytest.fixture(scope="session")
def postgres_tables() -> list[str]:
    """Migrate the PostgreSQL test database once; tests then start from emptied tables."""
    assert TEST_DATABASE_URL
    settings = Settings(DATABASE_URL=TEST_DATABASE_URL, SECRET_KEY=TEST_SECRET)

    async def go() -> list[str]:
        engine = create_engine(settings.database_url)
        await migrate(engine)
        async with engine.connect() as conn:
            tables = [t for t in await dialect.list_tables(conn) if t != "alembic_version"]
        await engine.dispose()
        return tables

    return _run(go())


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def clock() -> MovableClock:
    return MovableClock()


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    """Override in a test module (or with indirect parametrisation) to change configuration."""
    return {}


@pytest.fixture
def settings(backend: str, tmp_path: Path, request: pytest.FixtureRequest,
             settings_overrides: dict[str, Any]) -> Settings:
    values: dict[str, Any] = {"DATA_DIR": tmp_path / "data", "SECRET_KEY": TEST_SECRET, "DOMAIN": "localhost"}
    if backend == "sqlite":
        template = request.getfixturevalue("sqlite_template")
        db = tmp_path / "data" / "chat.db"
        db.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(template, db)
        values["DATABASE_URL"] = f"sqlite:///{db}"
    else:
        request.getfixturevalue("postgres_tables")
        values["DATABASE_URL"] = TEST_DATABASE_URL
        if TEST_REDIS_URL:
            values["REDIS_URL"] = TEST_REDIS_URL
    values.update(settings_overrides)
    return Settings(**values)


@pytest.fixture
async def rt(settings: Settings, clock: MovableClock, backend: str, request: pytest.FixtureRequest
             ) -> AsyncIterator[Runtime]:
    runtime = Runtime(settings, clock=clock, redis_prefix=f"test-{uuid.uuid4().hex[:12]}")
    if backend == "postgres":
        tables = request.getfixturevalue("postgres_tables")
        async with runtime.engine.begin() as conn:
            await dialect.truncate_all(conn, tables)
    # Cheap hashes keep the suite fast; the production parameters are asserted in tests/accounts
    # and measured by `make bench`.
    runtime.password_hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    runtime.code_hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    # Link previews and Web Push never reach past the loopback range, nor ask a real DNS server.
    confine(runtime.outbound)
    await runtime.start(run_migrations=False)
    try:
        yield runtime
    finally:
        await runtime.close()


@pytest.fixture
def app(settings: Settings, rt: Runtime) -> Any:
    return create_app(settings, rt)


@pytest.fixture
async def client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
        yield c


@pytest.fixture
async def documented(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    """A client reaching only the documented FastAPI routes, never their plain twins (api/plain.py)."""
    async with documented_client(app) as c:
        yield c


SETTLE = "__TEST_SETTLE__"


class EventLog(list[Event]):
    def __init__(self, bus: Any = None) -> None:
        super().__init__()
        self.bus = bus
        self.marks: list[str] = []

    def of_type(self, type_: str) -> list[Event]:
        return [e for e in self if e.type == type_]

    async def reset(self) -> None:
        """Forget what was captured so far, once the events already published have arrived (through Redis
        they may still be in flight when the setup's last request has answered)."""
        await self.settle()
        self.clear()

    async def settle(self, limit: float = 5.0) -> None:
        """Wait until everything published so far has been delivered: publish a marker and wait for it
        (Redis delivers one channel's messages in publish order; the local bus delivers at once)."""
        mark = uuid.uuid4().hex
        await self.bus.publish([Event(SETTLE, {"mark": mark}, (0,))])
        deadline = asyncio.get_running_loop().time() + limit
        while mark not in self.marks:
            assert asyncio.get_running_loop().time() < deadline, "bus did not deliver within the timeout"
            await asyncio.sleep(0.002)


@pytest.fixture
async def capture_events(rt: Runtime) -> AsyncIterator[EventLog]:
    log = EventLog(rt.bus)

    async def handler(ev: Event) -> None:
        if ev.type == SETTLE:
            log.marks.append(ev.data["mark"])
        else:
            log.append(ev)

    rt.bus.subscribe(handler)
    yield log
    rt.bus.unsubscribe(handler)


@pytest.fixture
def assert_query_count(rt: Runtime) -> Any:
    """`with assert_query_count(3): ...` fails when the block runs more SQL statements than allowed."""

    @contextmanager
    def check(maximum: int) -> Iterator[list[str]]:
        statements: list[str] = []

        def on_execute(_conn, _cursor, statement, _params, _ctx, _many):  # type: ignore[no-untyped-def]
            if not statement.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")):
                statements.append(statement)

        sa_event.listen(rt.engine.sync_engine, "before_cursor_execute", on_execute)
        try:
            yield statements
        finally:
            sa_event.remove(rt.engine.sync_engine, "before_cursor_execute", on_execute)
        assert len(statements) <= maximum, f"{len(statements)} queries > {maximum}:\n" + "\n".join(statements)

    return check


@pytest.fixture
def accounts(client: httpx.AsyncClient) -> Accounts:
    return Accounts(client)


@pytest.fixture
def api(client: httpx.AsyncClient) -> Api:
    """The HTTP helper (tests/support/http.py): `await api.get("/users/@me", alice, expect=200)`."""
    return Api(client)


# ---- servers a test may ask for: the gateway on a real port, the media-server stand-in ------------------


@pytest.fixture
def gateway_timing() -> Timing:
    """The gateway's timings (heartbeat, identify window); a test module may shorten them."""
    return Timing()


@pytest.fixture
async def gateway(app: Any, gateway_timing: Timing) -> AsyncIterator[GatewayServer]:
    """The app served on a free port with WebSocket clients for the tests; they are closed at the end."""
    app.state.gateway_timing = gateway_timing
    async with served(app) as port:
        gw = GatewayServer(f"ws://127.0.0.1:{port}", app)
        try:
            yield gw
        finally:
            for client in gw.clients:
                client._reader.cancel()
                try:
                    await asyncio.wait_for(client.ws.close(), 1)
                except Exception:
                    pass


@pytest.fixture
async def standin() -> AsyncIterator[StandIn]:
    """A LiveKit stand-in on a loopback port, checking the media keys of tests/support/voice.py."""
    server = StandIn(MEDIA_KEY, MEDIA_SECRET)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()

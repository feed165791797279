"""PostgreSQL outages (docs/operations.md, "Outages"), through a TCP proxy in front of the test database that
the test cuts (every connection reset, new ones refused, as while PostgreSQL restarts) and restores.

While the database is unreachable, requests answer 503 `service.unavailable` with Retry-After within a few
seconds; once it is back, the node serves again by itself within 5 s: the pooled connections that died idle,
and the one that died under an open transaction, are replaced without a restart. Skipped without
TEST_DATABASE_URL."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from meadhall import runtime
from meadhall.api.errors import outage
from tests.support.faultproxy import FaultProxy
from tests.support.guilds import make_guild
from tests.support.messages import history, post
from tests.support.outage import assert_unavailable as outage_answer
from tests.support.outage import timed
from tests.support.redis_server import PrivateRedis

TEST_DATABASE_URL = __import__("os").environ.get("TEST_DATABASE_URL") or None
pytestmark = pytest.mark.skipif(not TEST_DATABASE_URL, reason="needs TEST_DATABASE_URL (PostgreSQL)")

PROMPT = 9.0  # the connect timeout (runtime.py) is 5 s; this is the test's margin
RECOVERY = 5.0


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> str:
    # Statements of the serving runtime (its connections are opened after this) wait 2 s, not 15, for a
    # hung server: the test's time.
    monkeypatch.setattr(runtime, "DATABASE_COMMAND_TIMEOUT", 2.0)
    return "postgres"


@pytest.fixture
def proxy() -> Iterator[FaultProxy]:
    assert TEST_DATABASE_URL
    url = make_url(TEST_DATABASE_URL)
    with FaultProxy(url.host or "127.0.0.1", url.port or 5432) as p:
        yield p


@pytest.fixture
def redis_server() -> Iterator[PrivateRedis]:
    with PrivateRedis() as server:
        yield server


@pytest.fixture
def settings_overrides(proxy: FaultProxy, redis_server: PrivateRedis) -> dict[str, Any]:
    assert TEST_DATABASE_URL
    through = make_url(TEST_DATABASE_URL).set(host="127.0.0.1", port=proxy.port)
    return {"DATABASE_URL": through.render_as_string(hide_password=False), "REDIS_URL": redis_server.url}


def assert_unavailable(r: httpx.Response, elapsed: float) -> None:
    outage_answer(r, elapsed, PROMPT)


async def served_again(client: httpx.AsyncClient, account: Any) -> float:
    """Seconds until the node answers a database read again (asserted under RECOVERY)."""
    back = time.monotonic()
    while True:
        r = await client.get("/api/v1/users/@me", headers=account.headers)
        if r.status_code == 200:
            return time.monotonic() - back
        assert r.status_code == 503, r.text
        assert time.monotonic() - back < RECOVERY, "the pool did not recover from the PostgreSQL restart"
        await asyncio.sleep(0.1)


async def test_requests_answer_503_while_postgresql_is_down_and_the_pool_recovers(
        client: httpx.AsyncClient, accounts: Any, proxy: FaultProxy, rt: Any) -> None:
    alice = await accounts.register("alice")
    room = (await make_guild(client, alice))["system_channel_id"]
    await post(client, alice, room, "before the outage")
    # Several idle connections in the pool, all of which die in the cut.
    await asyncio.gather(*(client.get("/api/v1/users/@me", headers=alice.headers) for _ in range(8)))
    assert rt.engine.pool.checkedin() >= 2

    proxy.cut()
    r, elapsed = await timed(client.get("/api/v1/users/@me", headers=alice.headers))
    assert_unavailable(r, elapsed)  # a session cannot be checked: 503, never 401 (that would sign out)
    r, elapsed = await timed(client.post(f"/api/v1/channels/{room}/messages", headers=alice.headers,
                                         json={"content": "during the outage"}))
    assert_unavailable(r, elapsed)
    r = await client.get("/readyz")
    assert r.status_code == 503 and r.json()["checks"]["database"] == "error"

    proxy.restore()
    assert await served_again(client, alice) < RECOVERY
    await post(client, alice, room, "after the outage")
    contents = [m["content"] for m in (await history(client, alice, room))["messages"]]
    assert contents.count("before the outage") == 1 and contents.count("after the outage") == 1
    assert "during the outage" not in contents


async def test_a_connection_dropped_under_an_open_transaction_is_replaced(
        client: httpx.AsyncClient, accounts: Any, proxy: FaultProxy, rt: Any) -> None:
    alice = await accounts.register("alice")

    with pytest.raises(Exception) as failed:
        async with rt.uow() as uow:
            await uow.conn.execute(text("SELECT 1"))
            proxy.cut()
            proxy.restore()  # back at once: only the connection under the transaction is gone
            await uow.conn.execute(text("SELECT 1"))
    unavailable = outage(failed.value)
    assert unavailable is not None and unavailable.status == 503, repr(failed.value)

    # The next requests get working connections; none is handed the dead one.
    answers = await asyncio.gather(*(client.get("/api/v1/users/@me", headers=alice.headers) for _ in range(12)))
    assert [r.status_code for r in answers] == [200] * 12


async def test_a_hung_postgresql_answers_503_promptly_and_the_pool_recovers(
        client: httpx.AsyncClient, accounts: Any, proxy: FaultProxy, rt: Any) -> None:
    """PostgreSQL stops answering on connections already open (a hung server, a network partition): the
    pooled connections' next statement must not wait for ever."""
    alice = await accounts.register("alice")
    await asyncio.gather(*(client.get("/api/v1/users/@me", headers=alice.headers) for _ in range(4)))

    proxy.freeze()
    r, elapsed = await timed(client.get("/api/v1/users/@me", headers=alice.headers))
    assert_unavailable(r, elapsed)

    proxy.restore()
    assert await served_again(client, alice) < RECOVERY

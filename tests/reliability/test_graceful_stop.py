"""A graceful stop (SIGTERM, a rolling restart; docs/operations.md, "Restarts") of a real `meadhall serve`:
the node stops taking new connections at once, lets an in-flight request (a slowly streamed upload) finish,
sends each gateway client RECONNECT (op 7) and then closes it with 1012, and exits with status 0 within 10 s.
With Redis and a second node, the stopping node hands its sessions over first, so its clients RESUME on the
other node without losing an event. The last activity of its users is written on the way out."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from websockets.asyncio.client import connect

from meadhall.accounts import presence
from meadhall.core.clock import as_utc
from meadhall.db.schema import users
from tests.support.faultproxy import FaultProxy
from tests.support.gateway import WAIT, GatewayClient
from tests.support.isolation import clean_env
from tests.support.processes import Node, serve, wait_healthy
from tests.support.redis_server import PrivateRedis

API = "/api/v1"
PASSWORD = "correct horse battery staple"
SECRET = "graceful-stop-test-secret-0123456789abcdef"
STOP_WITHIN = 10.0
TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL") or None


def register(http: httpx.Client, node: Node, label: str) -> dict[str, Any]:
    username = f"{label}_{uuid.uuid4().hex[:8]}"
    r = http.post(f"{node.url}{API}/auth/register",
                  json={"username": username, "email": f"{username}@example.com", "password": PASSWORD})
    assert r.status_code == 201, r.text
    body = r.json()
    return {"id": body["user"]["id"], "token": body["token"], "headers": {"Authorization": f"Bearer {body['token']}"}}


def make_room(http: httpx.Client, node: Node, owner: dict[str, Any]) -> str:
    r = http.post(f"{node.url}{API}/guilds", json={"name": "Hall"}, headers=owner["headers"])
    assert r.status_code == 201, r.text
    return str(r.json()["guild"]["system_channel_id"])


async def identified(node: Node, token: str) -> GatewayClient:
    ws = await connect(f"{node.ws_url}/gateway?v=1&encoding=json", open_timeout=WAIT, max_size=None,
                       compression=None, proxy=None)
    client = GatewayClient(ws)
    await client.identify(token)
    return client


async def reconnect_then_1012(client: GatewayClient) -> None:
    """What a client of a stopping node sees: op 7 (nothing after it but the close), then close 1012."""
    frame = await client.recv_until(lambda f: f["op"] != 0 and f["op"] != 11)
    assert frame["op"] == 7, frame
    assert await client.wait_closed() == 1012
    assert client.frames.empty(), list(client.frames._queue)  # type: ignore[attr-defined]


def assert_clean_exit(node: Node, signalled: float) -> None:
    code = node.proc.wait(timeout=max(0.1, signalled + STOP_WITHIN - time.monotonic()))
    elapsed = time.monotonic() - signalled
    output = node.stderr() + node.stdout()
    assert code == 0, f"exit status {code}:\n{output}"
    assert elapsed < STOP_WITHIN, f"stopped after {elapsed:.1f} s"
    assert "Traceback" not in output, output


@pytest.fixture
async def nodes() -> AsyncIterator[list[Node]]:
    started: list[Node] = []
    yield started
    for node in started:
        if node.proc.poll() is None:
            node.proc.kill()
            node.proc.wait()


class SlowUpload:
    """A multipart upload whose body is held half-way until `finish` is set: a request in flight."""

    def __init__(self) -> None:
        self.finish = asyncio.Event()
        self.boundary = "sl0wb0undary"
        self.head = (f'--{self.boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\n'
                     "Content-Type: application/octet-stream\r\n\r\n").encode()
        self.data = os.urandom(256 * 1024)

    async def body(self) -> AsyncIterator[bytes]:
        yield self.head + self.data[:128 * 1024]
        await self.finish.wait()
        yield self.data[128 * 1024:] + f"\r\n--{self.boundary}--\r\n".encode()

    def headers(self, account: dict[str, Any]) -> dict[str, str]:
        return {**account["headers"], "Content-Type": f"multipart/form-data; boundary={self.boundary}"}


async def until(condition: Any, wait: float = WAIT) -> None:
    deadline = time.monotonic() + wait
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_sigterm_drains_the_node_and_exits_0_within_10_seconds(tmp_path: Path, nodes: list[Node]) -> None:
    data_dir = tmp_path / "data"
    node = serve(tmp_path / "node", clean_env(DATA_DIR=str(data_dir), SECRET_KEY=SECRET, LOG_LEVEL="warning"))
    nodes.append(node)
    with httpx.Client(timeout=10, trust_env=False) as http:
        wait_healthy(node, http)
        alice = register(http, node, "alice")
        room = make_room(http, node, alice)
    listener = await identified(node, alice["token"])

    upload = SlowUpload()
    async with httpx.AsyncClient(timeout=STOP_WITHIN, trust_env=False) as client:
        in_flight = asyncio.create_task(client.post(f"{node.url}{API}/channels/{room}/files",
                                                    content=upload.body(), headers=upload.headers(alice)))
        spools = data_dir / "files" / "tmp"
        await until(lambda: spools.exists() and any(spools.iterdir()))  # the node is receiving it

        node.proc.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        await reconnect_then_1012(listener)
        # Not listening any more: a new connection is refused (the proxy sends it to another node).
        with pytest.raises(httpx.ConnectError):
            await client.get(f"{node.url}/healthz")
        assert not in_flight.done()

        upload.finish.set()
        r = await in_flight
    assert r.status_code == 201, r.text
    assert r.json()["file"]["size"] == len(upload.data)
    assert_clean_exit(node, signalled)


async def last_seen_column(rt: Any, user_id: str) -> Any:
    async with rt.read() as uow:
        return as_utc((await uow.conn.execute(select(users.c.last_seen_at).where(users.c.id == int(user_id)))).scalar())


async def until_written(rt: Any, user_id: str, value: Any) -> None:
    """Until the connection's first activity has been written (the frozen clock's time)."""
    deadline = time.monotonic() + WAIT
    while await last_seen_column(rt, user_id) != value:
        assert time.monotonic() < deadline, "the first activity was never written"
        await asyncio.sleep(0.02)


async def test_the_last_activity_of_a_stopping_nodes_users_is_written(app: Any, rt: Any, clock: Any, accounts: Any,
                                                                      gateway_timing: Any) -> None:
    """The hot `last_seen` (a heartbeat's) is written to the column when a single node stops, not lost with
    the process's memory (its shared store); with Redis it stays there for every node."""
    from tests.support.gateway import GatewayServer
    from tests.support.served import served

    alice = await accounts.register("alice")
    async with served(app) as port:
        gateway = GatewayServer(f"ws://127.0.0.1:{port}", app)
        clock.advance(1)  # (the registration wrote the column at the frozen clock's time)
        connected_at = clock.now()
        client = await gateway.identified(alice["token"])  # the first activity writes the column at once
        await until_written(rt, alice.id, connected_at)
        clock.advance(30)
        await client.send(1, client.last_seq)  # a heartbeat 30 s later: only the hot value moves
        await client.recv_until(lambda f: f["op"] == 11)
        heartbeat_at = clock.now()
        before = await last_seen_column(rt, alice.id)
        assert before is not None and heartbeat_at.timestamp() - before.timestamp() >= 29
    after = await last_seen_column(rt, alice.id)
    if rt.redis is None:
        # The server stopped (its lifespan ended): the column holds the heartbeat's time.
        assert abs(after.timestamp() - heartbeat_at.timestamp()) < 1
    else:
        # With Redis the hot value outlives the node, and is what every node reads.
        seen = await presence.last_seen(rt, int(alice.id), after)
        assert seen is not None and abs(seen.timestamp() - heartbeat_at.timestamp()) < 1


@pytest.mark.skipif(not TEST_DATABASE_URL, reason="needs TEST_DATABASE_URL (two nodes share PostgreSQL)")
async def test_a_stopping_node_hands_its_sessions_over_and_its_clients_resume_on_the_other(
        tmp_path: Path, nodes: list[Node]) -> None:
    assert TEST_DATABASE_URL
    with PrivateRedis() as redis_server:
        node_ids = random.sample(range(512, 1024), 2)

        def env(node_id: int) -> dict[str, str]:
            return clean_env(DATABASE_URL=TEST_DATABASE_URL, REDIS_URL=redis_server.url, NODE_ID=str(node_id),
                             SECRET_KEY=SECRET, DATA_DIR=str(tmp_path / "data"), LOG_LEVEL="warning",
                             RATE_LIMITS=json.dumps({"messages.send": "1000/5"}))

        a, b = serve(tmp_path / "a", env(node_ids[0])), serve(tmp_path / "b", env(node_ids[1]))
        nodes.extend([a, b])
        with httpx.Client(timeout=10, trust_env=False) as http:
            wait_healthy(a, http)
            wait_healthy(b, http)
            alice = register(http, a, "alice")
            room = make_room(http, a, alice)
        on_a = await identified(a, alice["token"])
        session_id = on_a.session_id

        async with httpx.AsyncClient(timeout=10, trust_env=False) as client:
            async def post_on(node: Node, content: str) -> str:
                r = await client.post(f"{node.url}{API}/channels/{room}/messages", headers=alice["headers"],
                                      json={"content": content, "nonce": content})
                assert r.status_code == 201, r.text
                return str(r.json()["message"]["id"])

            first = await post_on(b, "before the stop")
            assert (await on_a.dispatch("MESSAGE_CREATE"))["id"] == first
            seq = on_a.last_seq

            a.proc.send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            await reconnect_then_1012(on_a)
            missed = [await post_on(b, "while resuming 1"), await post_on(b, "while resuming 2")]

            on_b = GatewayClient(await connect(f"{b.ws_url}/gateway?v=1&encoding=json", open_timeout=WAIT,
                                               proxy=None))
            assert (await on_b.recv())["op"] == 10
            await on_b.send(6, {"token": alice["token"], "session_id": session_id, "seq": seq})
            replayed: list[dict[str, Any]] = []
            while True:
                frame = await on_b.recv()
                assert frame["op"] == 0, frame  # RESUMED, not INVALID_SESSION: the session was handed over
                if frame["t"] == "RESUMED":
                    break
                replayed.append(frame)
            assert [f["d"]["id"] for f in replayed if f["t"] == "MESSAGE_CREATE"] == missed
            await on_b.close()
        assert_clean_exit(a, signalled)


async def test_a_node_stops_within_10_seconds_even_when_redis_hangs(tmp_path: Path, nodes: list[Node]) -> None:
    """Redis stops answering (every connection open, nothing said) just before the SIGTERM: the hand-over
    cannot be published, yet the clients are told to reconnect and the process is out in time."""
    with PrivateRedis() as redis_server, FaultProxy("127.0.0.1", redis_server.port) as proxy:
        node = serve(tmp_path / "node", clean_env(DATA_DIR=str(tmp_path / "data"), SECRET_KEY=SECRET,
                                                  LOG_LEVEL="warning", REDIS_URL=f"redis://{proxy.url_host}/0"))
        nodes.append(node)
        with httpx.Client(timeout=10, trust_env=False) as http:
            wait_healthy(node, http)
            alice = register(http, node, "alice")
        listener = await identified(node, alice["token"])

        proxy.freeze()
        node.proc.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        await reconnect_then_1012(listener)
        code = node.proc.wait(timeout=STOP_WITHIN)
        assert code == 0, node.stderr()
        assert time.monotonic() - signalled < STOP_WITHIN

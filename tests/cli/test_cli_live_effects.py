"""A command's effect on live clients reaches their open gateway connections within 2 seconds, on one node
without Redis as on several (docs/operations.md; docs/architecture.md, "CLI effects reach live connections").

The bound itself is taken end to end: a real `meadhall serve` (tests/support/processes.py) runs on SQLite without
Redis, and on a fresh PostgreSQL database with Redis when TEST_DATABASE_URL and TEST_REDIS_URL are set; users
hold open gateway connections, and make-admin and reset-password run as separate `meadhall` processes with the
node's environment. What the other commands send is taken in-process (the CLI's commands against the test's
database, tests/cli/conftest.py; the test's app served, its lifespan draining the outbox), as
tests/cli/test_cli_outbox.py does. Each event arrives once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from tests.support.gateway import WAIT, GatewayClient
from tests.support.isolation import clean_env, fresh_postgres
from tests.support.processes import MEADHALL, Node, serve, stop, wait_healthy

TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL") or None
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL") or None
NODES = ["sqlite"] + (["postgres+redis"] if TEST_DATABASE_URL and TEST_REDIS_URL else [])
WITHIN = 2.0  # seconds (docs/operations.md)
CLOSE_SESSION_INVALIDATED = 4010
# The node migrates a fresh database before it answers: slow on a busy machine, so the wait is generous.
STARTUP = 120.0


@dataclass
class LiveNode:
    node: Node
    env: dict[str, str]
    accounts: dict[str, dict[str, Any]] = field(default_factory=dict)  # username -> {"id", "token", "email"}
    clients: list[GatewayClient] = field(default_factory=list)

    async def meadhall(self, *args: str) -> dict[str, Any]:
        """Run one command as its own process, as an operator would; its JSON answer."""
        proc = await asyncio.create_subprocess_exec(str(MEADHALL), *args, env=self.env, cwd=self.node.workdir,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        return json.loads(out)

    def create_users(self, names: list[str], *, admin: bool = False) -> None:
        """Accounts with a session each, made by one `create-user --count --sessions` (a command takes seconds
        to start on a busy machine; no registration bucket either)."""
        path = self.node.workdir / f"sessions-{uuid.uuid4().hex[:6]}.jsonl"
        prefix = "chief" if admin else "member"
        args = ["create-user", "--count", str(len(names)), "--prefix", prefix, "--sessions", str(path)]
        done = subprocess.run([str(MEADHALL), *args, *(["--admin"] if admin else [])], env=self.env,
                              cwd=self.node.workdir, capture_output=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr.decode()
        for name, line in zip(names, path.read_text().splitlines(), strict=True):
            self.accounts[name] = json.loads(line)

    async def connected(self, who: dict[str, Any]) -> GatewayClient:
        ws = await connect(f"{self.node.ws_url}/gateway?v=1&encoding=json", open_timeout=WAIT, max_size=None,
                           compression=None, proxy=None)
        client = GatewayClient(ws)
        self.clients.append(client)
        ready = await client.identify(who["token"])
        assert ready["user"]["id"] == who["id"]
        return client


@pytest.fixture(scope="module", params=NODES)
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveNode]:
    root = tmp_path_factory.mktemp(f"live-{request.param}")
    database = fresh_postgres() if request.param != "sqlite" else contextlib.nullcontext(None)
    with database as url:
        values = {"DATA_DIR": str(root / "data"), "SECRET_KEY": "live-effects-secret-0123456789abcdefghij",
                  "DOMAIN": "chat.example.com", "LOG_LEVEL": "warning"}
        if url is not None:
            assert TEST_REDIS_URL
            values |= {"DATABASE_URL": url, "REDIS_URL": TEST_REDIS_URL}
        env = clean_env(**values)
        node = serve(root / "node", env)
        try:
            with httpx.Client(timeout=10, trust_env=False) as http:
                wait_healthy(node, http, timeout=STARTUP)
            live = LiveNode(node, env)
            live.create_users(["bob", "carol"])
            yield live
        finally:
            code = stop(node)
        output = node.stderr() + node.stdout()
        assert code in (0, -15), f"unclean exit {code}:\n{output}"
        assert "Traceback" not in output, output


@pytest.fixture
async def hall(live: LiveNode) -> AsyncIterator[LiveNode]:
    yield live
    for client in live.clients:
        client._reader.cancel()
        with contextlib.suppress(Exception):
            await client.ws.close()
    live.clients.clear()


async def invalidated(client: GatewayClient) -> tuple[dict[str, Any], float]:
    """SESSION_INVALIDATED, then the close with 4010; the seconds until the close."""
    start = time.monotonic()
    got = await client.dispatch("SESSION_INVALIDATED", wait=WITHIN)
    assert await client.wait_closed(WITHIN) == CLOSE_SESSION_INVALIDATED
    return got, time.monotonic() - start


async def test_make_admin_closes_the_new_administrators_connections_with_4010(hall):
    bob = hall.accounts["bob"]
    bob_gateway = await hall.connected(bob)
    await hall.meadhall("make-admin", "--email", bob["email"])
    got, seconds = await invalidated(bob_gateway)
    assert got["reason"] == "admin_action" and seconds < WITHIN


async def test_reset_password_closes_the_accounts_connections_with_4010(hall):
    carol = hall.accounts["carol"]
    carol_gateway = await hall.connected(carol)
    await hall.meadhall("reset-password", "--email", carol["email"])
    got, seconds = await invalidated(carol_gateway)
    assert got["reason"] == "password_changed" and seconds < WITHIN


# ---- the other commands in-process: what each sends, through the outbox the served app drains ----------


async def created(cli: Any, directory: Path, names: list[str], *, admin: bool = False) -> dict[str, dict[str, Any]]:
    """Accounts with a session each, made as the node's ones are (`create-user --count --sessions`): an
    administrator made so holds a session without TOTP, as after `meadhall create-user --admin`."""
    path = directory / f"sessions-{uuid.uuid4().hex[:6]}.jsonl"
    prefix = "chief" if admin else "member"
    r = await cli("create-user", "--count", str(len(names)), "--prefix", prefix, "--sessions", str(path),
                  *(["--admin"] if admin else []))
    assert r.exit_code == 0, r.stderr
    return {name: json.loads(line) for name, line in zip(names, path.read_text().splitlines(), strict=True)}


async def command(cli: Any, *args: str) -> None:
    r = await cli(*args)
    assert r.exit_code == 0, r.stderr


async def test_totp_setup_and_the_totp_reset_of_an_administrator_reach_their_connections(cli, gateway, tmp_path):
    chief = (await created(cli, tmp_path, ["chief"], admin=True))["chief"]
    chief_gateway = await gateway.identified(chief["token"])

    await command(cli, "totp-setup", "--email", chief["email"])
    updated = await chief_gateway.dispatch("USER_UPDATE")
    assert updated["id"] == chief["id"] and updated["totp_enabled"] is True
    await chief_gateway.no_dispatch("USER_UPDATE", settle=1.0)  # once, also with Redis

    await command(cli, "totp-reset", "--email", chief["email"])
    got = await chief_gateway.dispatch("SESSION_INVALIDATED")
    assert got["reason"] == "admin_action"
    assert await chief_gateway.wait_closed() == CLOSE_SESSION_INVALIDATED


async def test_remove_admin_updates_the_former_administrators_connections_once(cli, gateway, tmp_path):
    warden = (await created(cli, tmp_path, ["warden", "keeper"], admin=True))["warden"]  # not the last one
    onlooker = (await created(cli, tmp_path, ["onlooker"]))["onlooker"]
    warden_gateway = await gateway.identified(warden["token"])
    onlooker_gateway = await gateway.identified(onlooker["token"])

    await command(cli, "remove-admin", "--email", warden["email"])
    updated = await warden_gateway.dispatch("USER_UPDATE")
    assert updated["id"] == warden["id"] and updated["is_instance_admin"] is False
    await warden_gateway.no_dispatch("USER_UPDATE", settle=1.0)
    assert not warden_gateway.closed.is_set()  # removal revokes no session
    await onlooker_gateway.no_dispatch("USER_UPDATE", settle=0.1)


async def test_the_totp_reset_of_a_plain_user_keeps_the_connection_and_updates_it(cli, gateway, tmp_path):
    dora = (await created(cli, tmp_path, ["dora"]))["dora"]
    dora_gateway = await gateway.identified(dora["token"])
    await command(cli, "totp-setup", "--email", dora["email"])
    assert (await dora_gateway.dispatch("USER_UPDATE"))["totp_enabled"] is True
    await command(cli, "totp-reset", "--email", dora["email"])
    assert (await dora_gateway.dispatch("USER_UPDATE"))["totp_enabled"] is False
    await dora_gateway.no_dispatch(settle=0.5)
    assert not dora_gateway.closed.is_set()

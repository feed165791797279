"""Web Push tests: a push service on 127.0.0.2 over TLS with a certificate of a CA made for the test, which the
runtime's outbound client trusts (its SSL context, set here, never an unverified one)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from typer.testing import CliRunner

from meadhall.cli.main import app as cli_app
from tests.support.outbound import ALLOWED, VAPID, Site, make_ca


class PushService(Site):
    """Answers each endpoint path with the status set for it (201 by default), after `delay` seconds."""

    def __init__(self, tls: Any) -> None:
        self.status: dict[str, int] = {}
        self.delay = 0.0
        self.client_tls: Any = None
        super().__init__({}, ssl_context=tls)

    async def start(self) -> None:
        async def answer(request: web.Request) -> web.StreamResponse:
            await asyncio.sleep(self.delay)
            return web.Response(status=self.status.get(request.path, 201))

        self.routes = _AnyPath(answer)  # type: ignore[assignment]
        await super().start()

    def received(self, path: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.requests if path is None or r["path"] == path]


class _AnyPath(dict):
    def __init__(self, handler: Any) -> None:
        super().__init__()
        self.handler = handler

    def get(self, _path: str, _default: Any = None) -> Any:
        return self.handler


@pytest.fixture
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, Any]:
    return {"VAPID_PRIVATE_KEY": VAPID["private_key"], "OUTBOUND_ALLOWED_NETWORKS": ALLOWED,
            **getattr(request, "param", {})}


@pytest.fixture
async def push_service(rt: Any, tmp_path: Any) -> AsyncIterator[PushService]:
    ca = make_ca(tmp_path)
    rt.outbound.ssl_context = ca.client
    service = PushService(ca.server)
    service.client_tls = ca.client  # for the outbound client of another node (tests/support/nodes.py)
    await service.start()
    try:
        yield service
    finally:
        await service.stop()




@pytest.fixture
def cli(settings: Any, rt: Any) -> Any:
    """`meadhall <command>` in-process against the test's database, as an operator runs it."""
    runner = CliRunner()
    env = {"DATA_DIR": str(settings.DATA_DIR), "DATABASE_URL": settings.DATABASE_URL,
           "SECRET_KEY": settings.SECRET_KEY, "DOMAIN": settings.DOMAIN, "REDIS_URL": ""}

    async def invoke(*args: str) -> Any:
        return await asyncio.to_thread(runner.invoke, cli_app, list(args), env=env)

    return invoke

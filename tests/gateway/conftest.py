"""The `gateway` fixture: a real server for gateway tests, uvicorn on a loopback port in the test's event
loop, serving the test's app (same runtime, clock and database). Its client is tests/support/gateway.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from meadhall.gateway.protocol import Timing
from tests.support.gateway import GatewayServer
from tests.support.served import served


@pytest.fixture
def gateway_timing() -> Timing:
    return Timing()


@pytest.fixture
async def gateway(app: Any, gateway_timing: Timing) -> AsyncIterator[GatewayServer]:
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

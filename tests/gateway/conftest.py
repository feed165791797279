"""The `gateway` fixture: a real server for gateway tests, uvicorn on a loopback port in the test's event
loop, serving the test's app (same runtime, clock and database). Its client is tests/support/gateway.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn

from meadhall.gateway.protocol import Timing
from tests.support.gateway import GatewayServer


@pytest.fixture
def gateway_timing() -> Timing:
    return Timing()


@pytest.fixture
async def gateway(app: Any, gateway_timing: Timing) -> AsyncIterator[GatewayServer]:
    app.state.gateway_timing = gateway_timing
    config = uvicorn.Config(app, host="127.0.0.1", port=0, lifespan="on", log_level="warning",
                            ws_max_size=64 * 1024, access_log=False)
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
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
        server.should_exit = True
        await asyncio.wait_for(task, 10)

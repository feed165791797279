"""The test's app served by a real uvicorn on a loopback port, in the test's own event loop (same
runtime, clock and database as the `client` fixture): for WebSocket clients and browsers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn

from meadhall.gateway.wire import PROTOCOL


@asynccontextmanager
async def served(app: Any, port: int = 0) -> AsyncIterator[int]:
    """Serve `app` on 127.0.0.1 (`port` 0: any free one) and yield the port; stopped on exit."""
    config = uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on", log_level="warning",
                            ws_max_size=64 * 1024, access_log=False, ws=PROTOCOL, ws_per_message_deflate=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield int(server.servers[0].sockets[0].getsockname()[1])
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)

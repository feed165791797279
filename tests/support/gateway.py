"""The gateway test client: a small WebSocket client speaking the gateway protocol (docs/gateway.md), and
the server handle the `gateway` fixture (tests/gateway/conftest.py) yields: uvicorn on a loopback port in
the test's event loop, serving the test's app (same runtime, clock and database)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

WAIT = 5.0


class GatewayClient:
    """One connection: frames are read by a background task into a queue; `closed_code` after close."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.seen: list[dict[str, Any]] = []
        self.last_seq: int | None = None
        self.session_id: str | None = None
        self.closed_code: int | None = None
        self.closed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                frame = json.loads(raw)
                if frame.get("s") is not None:
                    self.last_seq = frame["s"]
                self.seen.append(frame)
                await self.frames.put(frame)
        except ConnectionClosed:
            pass
        finally:
            self.closed_code = self.ws.close_code
            self.closed.set()

    async def send(self, op: int, d: Any = None) -> None:
        await self.ws.send(json.dumps({"op": op, "d": d}))

    async def recv(self, wait: float = WAIT) -> dict[str, Any]:
        get = asyncio.ensure_future(self.frames.get())
        closed = asyncio.ensure_future(self.closed.wait())
        done, _ = await asyncio.wait({get, closed}, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
        if get in done:
            closed.cancel()
            return get.result()
        get.cancel()
        closed.cancel()
        if self.frames.qsize():
            return self.frames.get_nowait()
        raise AssertionError(f"no frame within {wait}s (closed: {self.closed_code})")

    async def recv_until(self, pred: Callable[[dict[str, Any]], bool], wait: float = WAIT) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        end = loop.time() + wait
        while True:
            frame = await self.recv(max(0.01, end - loop.time()))
            if pred(frame):
                return frame

    async def dispatch(self, type_: str, wait: float = WAIT) -> dict[str, Any]:
        """The next dispatch of this type (others are skipped); returns its payload `d`."""
        frame = await self.recv_until(lambda f: f["op"] == 0 and f["t"] == type_, wait)
        return frame["d"]

    async def drain(self, settle: float = 0.2) -> list[dict[str, Any]]:
        """Every frame that arrives within `settle` seconds."""
        await asyncio.sleep(settle)
        out = []
        while not self.frames.empty():
            out.append(self.frames.get_nowait())
        return out

    async def no_dispatch(self, type_: str | None = None, settle: float = 0.3) -> None:
        got = [f for f in await self.drain(settle) if f["op"] == 0 and (type_ is None or f["t"] == type_)]
        assert not got, f"unexpected dispatches: {[(f['t'], f['d']) for f in got]}"

    async def wait_closed(self, wait: float = WAIT) -> int | None:
        await asyncio.wait_for(self.closed.wait(), wait)
        return self.closed_code

    async def identify(self, token: str | None, wait: float = WAIT) -> dict[str, Any]:
        hello = await self.recv(wait)
        assert hello["op"] == 10, hello
        await self.send(2, {"token": token} if token is not None else {})
        ready = await self.dispatch("READY", wait)
        self.session_id = ready["session_id"]
        return ready

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()


class GatewayServer:
    def __init__(self, url: str, app: Any) -> None:
        self.url = url
        self.app = app
        self.clients: list[GatewayClient] = []

    @property
    def hub(self) -> Any:
        return self.app.state.hub

    async def connect(self, path: str = "/gateway?v=1&encoding=json", **kw: Any) -> GatewayClient:
        ws = await connect(self.url + path, open_timeout=WAIT, max_size=None, compression=None,
                           proxy=None, **kw)
        client = GatewayClient(ws)
        self.clients.append(client)
        return client

    async def identified(self, token: str) -> GatewayClient:
        client = await self.connect()
        await client.identify(token)
        return client


class FrameSink:
    """The client side of a hub's `Connection` in unit tests: what it was sent, and its close code."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.closed: int | None = None

    async def send(self, frame: str) -> None:
        self.frames.append(json.loads(frame))

    async def close(self, code: int) -> None:
        self.closed = code

    def overflow(self) -> None:
        raise AssertionError("overflow")

    def dispatches(self) -> list[tuple[int, str, Any]]:
        return [(f["s"], f["t"], f["d"]) for f in self.frames if f["op"] == 0]

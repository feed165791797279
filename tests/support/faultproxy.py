"""A TCP proxy whose link to the server a test can cut and restore: a stand-in for a dependency
(PostgreSQL, Redis) that restarts, without touching the machine's shared server.

It runs its own event loop on a thread, so sync tests, async tests and harnesses in other processes'
style (bench/) use it alike:

    with FaultProxy("127.0.0.1", 5432) as proxy:   # clients connect to 127.0.0.1:proxy.port
        proxy.cut()       # every open connection is closed, new ones are refused (nothing listens)
        proxy.restore()   # the same port accepts and forwards again
        proxy.stall()     # connections are reset, new ones accepted and held, nothing is forwarded
        proxy.freeze()    # connections stay open, nothing more is forwarded either way (a hung server)
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any


class FaultProxy:
    def __init__(self, target_host: str, target_port: int, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.target = (target_host, target_port)
        self.host = host
        self.port = port
        self.mode = "forward"
        self.accepted = 0  # connections accepted since start (a test can see a client reconnect)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="faultproxy", daemon=True)
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    # ------------------------------------------------------------------ control (any thread)

    def start(self) -> FaultProxy:
        self._thread.start()
        self._call(self._listen())
        return self

    def close(self) -> None:
        if self._thread.is_alive():
            self._call(self._shut(listen=False))
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
        self._loop.close()

    def cut(self) -> None:
        """Close every proxied connection (the clients see a reset / EOF) and stop listening, so new
        connections are refused, as while a server restarts."""
        self.mode = "cut"
        self._call(self._shut(listen=False))

    def stall(self) -> None:
        """Close every proxied connection, then accept new ones and never answer (a hung server)."""
        self.mode = "stall"
        self._call(self._shut(listen=True))

    def freeze(self) -> None:
        """Keep every connection open but pass nothing more either way, and hold new ones the same way: a
        server that hangs with its clients connected (their next command times out, nothing is reset)."""
        self.mode = "freeze"

    def restore(self) -> None:
        self.mode = "forward"
        self._call(self._listen())

    @property
    def url_host(self) -> str:
        return f"{self.host}:{self.port}"

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ inside the proxy's loop

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)

    async def _listen(self) -> None:
        if self._server is not None:
            return
        # SO_REUSEADDR (asyncio's default on Unix) lets the same port be bound again right after a cut.
        self._server = await asyncio.start_server(self._handle, self.host, self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _shut(self, *, listen: bool) -> None:
        if not listen and self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._writers):
            _abort(writer)
        self._writers.clear()
        if listen:
            await self._listen()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self._writers.add(writer)
        if self.mode != "forward":
            while await reader.read(65536):  # stalled or frozen: swallow what the client sends, answer nothing
                pass
            self._writers.discard(writer)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            self._writers.discard(writer)
            _abort(writer)
            return
        self._writers.add(up_writer)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True)
        for w in (writer, up_writer):
            self._writers.discard(w)
            _abort(w)



    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                if self.mode == "freeze":
                    continue  # swallowed: the other side waits for ever
                writer.write(data)
                await writer.drain()
        finally:
            _abort(writer)


def _abort(writer: asyncio.StreamWriter) -> None:
    """Close at once, with a reset rather than an orderly FIN: what a killed server's peer sees."""
    transport = writer.transport
    if transport.is_closing():
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        except OSError:
            pass
    transport.abort()

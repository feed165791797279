"""A private `redis-server` on a free loopback port, which a test may stop and start again (the machine's
shared Redis must never be restarted). No persistence: a restart comes back empty, as a cache-only
Redis does.

    with PrivateRedis() as server:     # skips the test when redis-server is not installed
        url = server.url               # redis://127.0.0.1:<port>/0
        server.stop()                  # SIGKILL: connections reset, new ones refused
        server.start()                 # the same port again, empty
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from typing import Any

import pytest

STARTUP_TIMEOUT = 10.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class PrivateRedis:
    def __init__(self, port: int | None = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed")
        self.binary = binary
        self.port = port or _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> PrivateRedis:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--protected-mode", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not _answers_ping(self.port):
            assert self.proc.poll() is None, f"redis-server exited with {self.proc.returncode}"
            assert time.monotonic() < deadline, "redis-server did not answer PING"
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        """Kill it (no shutdown handshake, as in a crash or a container restart)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)

    def __enter__(self) -> PrivateRedis:
        return self.start()

    def __exit__(self, *_exc: Any) -> None:
        self.stop()

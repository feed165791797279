"""Real `meadhall serve` processes for tests: a free loopback port, a process writing its output to files
in its own work directory, a health wait and a clean stop. Used by the concurrent-start test
(tests/db) and the two-node test (tests/gateway); environments come from `tests.support.isolation.clean_env`."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

MEADHALL = Path(sys.executable).parent / "meadhall"
STARTUP_TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Node:
    proc: subprocess.Popen[bytes]
    port: int
    workdir: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def stderr(self) -> str:
        return (self.workdir / "stderr").read_text(errors="replace")

    def stdout(self) -> str:
        return (self.workdir / "stdout").read_text(errors="replace")


def spawn(args: list[str], workdir: Path, env: dict[str, str], port: int) -> Node:
    """Start `args` with stdout and stderr going to files in `workdir` (created)."""
    workdir.mkdir(parents=True, exist_ok=True)
    with open(workdir / "stdout", "wb") as out, open(workdir / "stderr", "wb") as err:
        proc = subprocess.Popen(args, env=env, stdout=out, stderr=err, cwd=workdir)
    return Node(proc, port, workdir)


def serve(workdir: Path, env: dict[str, str], port: int | None = None) -> Node:
    """`meadhall serve` (the console script) on 127.0.0.1 and a free port."""
    assert MEADHALL.exists(), f"console script not installed at {MEADHALL}"
    port = port or free_port()
    return spawn([str(MEADHALL), "serve", "--host", "127.0.0.1", "--port", str(port)], workdir, env, port)


def stop(node: Node) -> int:
    """SIGTERM (uvicorn's graceful shutdown), then the exit status; killed after 10 s."""
    if node.proc.poll() is None:
        node.proc.send_signal(signal.SIGTERM)
    try:
        return node.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        node.proc.kill()
        node.proc.wait()
        raise


def wait_healthy(node: Node, client: httpx.Client, path: str = "/healthz", timeout: float = STARTUP_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while True:
        assert node.proc.poll() is None, f"node exited with {node.proc.returncode}:\n{node.stderr()}"
        try:
            if client.get(f"{node.url}{path}").status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"node on port {node.port} never answered {path}:\n{node.stderr()}"
        time.sleep(0.05)

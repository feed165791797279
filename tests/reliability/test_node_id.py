"""One live process per NODE_ID (docs/deployment.md, "Several nodes"): two serving processes with one id would
mint the same snowflakes, and writes would fail with 500 at random. A second `meadhall serve` with an id that a
running node holds does not start, and says why; once that node stopped, the id is free at once."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from meadhall.realtime.node_lease import LEASE_S
from tests.support.isolation import clean_env
from tests.support.processes import serve, stop, wait_healthy
from tests.support.redis_server import PrivateRedis

SECRET = "node-id-test-secret-0123456789abcdef0123"


def test_a_second_node_with_the_same_node_id_does_not_start_and_the_id_frees_when_the_first_stops(
        tmp_path: Path) -> None:
    with PrivateRedis() as redis_server, httpx.Client(timeout=5, trust_env=False) as client:
        env = clean_env(DATA_DIR=str(tmp_path / "data"), REDIS_URL=redis_server.url, NODE_ID="7",
                        SECRET_KEY=SECRET, LOG_LEVEL="info")
        first = serve(tmp_path / "a", env)
        try:
            wait_healthy(first, client)
            second = serve(tmp_path / "b", env)
            started = time.monotonic()
            code = second.proc.wait(timeout=LEASE_S + 20)
            assert code != 0
            assert time.monotonic() - started >= LEASE_S - 1  # it waited for a lapsing lease first
            refusal = second.stderr()
            assert "NODE_ID 7 is in use by another running node" in refusal
            assert "Traceback" not in refusal  # one line, not a failed start-up's trace
            wait_healthy(first, client)  # the first one serves on

            other = serve(tmp_path / "c", {**env, "NODE_ID": "8"})  # its own id: starts
            try:
                wait_healthy(other, client)
            finally:
                assert stop(other) == 0
        finally:
            assert stop(first) == 0

        again = serve(tmp_path / "d", env)  # the graceful stop gave the id back: no wait
        try:
            started = time.monotonic()
            wait_healthy(again, client)
            assert time.monotonic() - started < LEASE_S / 2
        finally:
            stop(again)

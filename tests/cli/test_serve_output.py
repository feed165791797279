"""`meadhall serve` on a terminal at the default log level: one start-up line naming PUBLIC_URL (the
address to open, http://localhost:<port> by default) and no library chatter (Alembic, pool, uvicorn)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.support.isolation import clean_env
from tests.support.processes import serve, stop, wait_healthy


def test_serve_prints_its_address_and_no_library_lines(tmp_path: Path) -> None:
    # A fresh DATA_DIR: the start migrates, which is when Alembic would speak.
    node = serve(tmp_path / "node", clean_env(DATA_DIR=str(tmp_path / "data")))
    try:
        with httpx.Client() as http:
            wait_healthy(node, http)
            # The client page answers on PUBLIC_URL's host name (elsewhere it redirects there, tests/web).
            assert http.get(f"{node.url}/", headers={"Host": f"localhost:{node.port}"}).status_code == 200
    finally:
        stop(node)
    output = node.stdout() + node.stderr()
    for chatter in ("alembic", "Running upgrade", "Pool ", "Uvicorn running", "Started server process",
                    "Application startup", "INFO:"):
        assert chatter not in output, output
    lines = [json.loads(line) for line in output.splitlines()]  # every line is a JSON log line
    ready = [line for line in lines if line["event"] == "ready"]
    assert len(ready) == 1, output
    assert ready[0]["public_url"] == f"http://localhost:{node.port}"
    assert ready[0]["listen"] == f"127.0.0.1:{node.port}"
    assert lines[-1]["event"] == "stopped"  # a clean shutdown says so in Meadhall's words
    assert all(line["level"] == "info" for line in lines), output

"""Two `meadhall serve` processes started at the same moment against one EMPTY database: both become
healthy and ready, the schema is migrated exactly once (one node's migration applies every revision, the
other's finds nothing pending), alembic_version holds only the head, and both shut down cleanly.

Each node migrates in a child process (`meadhall migrate`, cli/first_migration.py) and logs "migrations
applied" with what its child applied. Each process runs the real console command through a small launcher
that (a) imports everything first and then waits on a shared start signal, so that both reach the
migration together, and (b) records what `Runtime.start`'s own migration call returned in that process:
nothing, since the child migrated first."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest

from meadhall.db.migrate import shipped_revisions
from tests.support.isolation import TEST_DATABASE_URL, clean_env, fresh_postgres
from tests.support.processes import STARTUP_TIMEOUT, Node, free_port, spawn, stop, wait_healthy

BACKENDS = ["sqlite"] + (["postgres"] if TEST_DATABASE_URL else [])

LAUNCHER = r'''
import json, os, sys, time
from pathlib import Path

import meadhall.runtime as runtime
from meadhall.cli.main import main
import meadhall.app, uvicorn  # noqa: F401  (import the heavy parts before the start signal)

_migrate = runtime.migrate

async def recording_migrate(engine):
    applied = await _migrate(engine)
    Path(os.environ["MH_APPLIED_FILE"]).write_text(json.dumps(applied))
    return applied

runtime.migrate = recording_migrate

Path(os.environ["MH_READY_FILE"]).touch()
go = Path(os.environ["MH_GO_FILE"])
deadline = time.monotonic() + 30
while not go.exists():
    if time.monotonic() > deadline:
        sys.exit("no start signal")
    time.sleep(0.005)
sys.argv = ["meadhall", *sys.argv[1:]]
main()
'''


def applied_in_process(node: Node) -> list[str]:
    path = node.workdir / "applied.json"
    assert path.exists(), "the launcher saw no migration call: does Runtime.start still call runtime.migrate?"
    return json.loads(path.read_text())


def applied_by_child(node: Node) -> list[str]:
    """What the node's migration child applied, from the node's "migrations applied" line (none: nothing)."""
    lines = [json.loads(line) for line in node.stdout().splitlines() if line.startswith("{")]
    logged = [line["applied"] for line in lines if line.get("event") == "migrations applied"]
    assert len(logged) <= 1, node.stdout()
    return logged[0] if logged else []


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """Environment for an empty database: a fresh DATA_DIR, plus a fresh PostgreSQL database."""
    data_dir = tmp_path / "data"
    if request.param == "sqlite":
        yield {"DATA_DIR": str(data_dir)}
        return
    with fresh_postgres() as url:
        yield {"DATA_DIR": str(data_dir), "DATABASE_URL": url}


def start_nodes(tmp_path: Path, env_values: dict[str, str], count: int = 2) -> list[Node]:
    launcher = tmp_path / "launcher.py"
    launcher.write_text(LAUNCHER)
    go = tmp_path / "go"
    nodes = []
    for i in range(count):
        workdir = tmp_path / f"node{i}"
        port = free_port()
        env = clean_env(
            SECRET_KEY="concurrent-start-secret-0123456789abcdef",
            LOG_LEVEL="info",
            MH_APPLIED_FILE=str(workdir / "applied.json"),
            MH_READY_FILE=str(workdir / "ready"),
            MH_GO_FILE=str(go),
            **env_values,
        )
        nodes.append(spawn([sys.executable, str(launcher), "serve", "--host", "127.0.0.1", "--port", str(port)],
                           workdir, env, port))
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while not all((n.workdir / "ready").exists() for n in nodes):
        for n in nodes:
            assert n.proc.poll() is None, f"node exited early:\n{n.stderr()}"
        assert time.monotonic() < deadline, "nodes did not load"
        time.sleep(0.01)
    go.touch()  # both are waiting: release them together
    return nodes


def version_rows(env_values: dict[str, str]) -> tuple[list[str], set[str]]:
    """alembic_version rows and table names, read without the service's code."""
    if "DATABASE_URL" not in env_values:
        db = sqlite3.connect(Path(env_values["DATA_DIR"]) / "chat.db")
        try:
            versions = [r[0] for r in db.execute("SELECT version_num FROM alembic_version")]
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            db.close()
        return versions, tables

    async def go() -> tuple[list[str], set[str]]:
        conn = await asyncpg.connect(env_values["DATABASE_URL"])
        try:
            versions = [r[0] for r in await conn.fetch("SELECT version_num FROM alembic_version")]
            tables = {r[0] for r in await conn.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
        finally:
            await conn.close()
        return versions, tables

    return asyncio.run(go())


def test_two_nodes_starting_together_migrate_once(tmp_path: Path, database: dict[str, str]) -> None:
    nodes = start_nodes(tmp_path, database)
    codes: list[int] = []
    try:
        with httpx.Client(timeout=5) as client:
            for node in nodes:
                wait_healthy(node, client)
            for node in nodes:
                r = client.get(f"{node.url}/readyz")
                assert r.status_code == 200, r.text
                assert r.json() == {"status": "ready", "checks": {"database": "ok", "redis": "disabled"}}
    finally:
        for node in nodes:
            codes.append(stop(node))

    revisions = shipped_revisions()
    results = sorted((applied_by_child(n) for n in nodes), key=len)
    assert results == [[], revisions], "exactly one node must apply the migrations, the other none"
    assert [applied_in_process(n) for n in nodes] == [[], []], "the serving processes must find nothing pending"

    versions, tables = version_rows(database)
    assert versions == [revisions[-1]]
    assert {"audit_log", "instance_settings"} <= tables

    for node, code in zip(nodes, codes, strict=True):
        output = node.stderr() + node.stdout()
        # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal (exit status -SIGTERM).
        assert code in (0, -signal.SIGTERM), f"unclean exit {code}:\n{output}"
        assert '"event": "stopped"' in output, output
        assert "Traceback" not in output, output
        assert '"level": "error"' not in output, output

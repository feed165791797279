"""A start whose migration fails stops as it always has, though the migration now runs in a child process
(cli/first_migration.py): uvicorn's "Application startup failed" after the error's traceback, both as JSON
log lines on stdout, exit status 3, and nothing of the child's own output (its error envelope)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from tests.support.isolation import TEST_DATABASE_URL, clean_env, fresh_postgres
from tests.support.processes import MEADHALL, free_port

BACKENDS = ["sqlite"] + (["postgres"] if TEST_DATABASE_URL else [])


async def _create_table(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("CREATE TABLE users (x integer)")
    finally:
        await conn.close()


@pytest.fixture(params=BACKENDS)
def blocked_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A database that the first migration cannot create its tables in: a `users` table is already there."""
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    if request.param == "sqlite":
        db = sqlite3.connect(data_dir / "chat.db")
        db.execute("CREATE TABLE users (x integer)")
        db.close()
        yield {"DATA_DIR": str(data_dir)}
        return
    with fresh_postgres() as url:
        asyncio.run(_create_table(url))
        yield {"DATA_DIR": str(data_dir), "DATABASE_URL": url}


def test_a_failed_migration_stops_the_start_with_uvicorns_message_and_status_3(
        blocked_database: dict[str, str]) -> None:
    env = clean_env(SECRET_KEY="failed-migration-secret-0123456789abcdef", LOG_LEVEL="info", **blocked_database)
    done = subprocess.run([str(MEADHALL), "serve", "--host", "127.0.0.1", "--port", str(free_port())], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1] == {**lines[-1], "event": "Application startup failed. Exiting.", "level": "error"}
    assert lines[-2]["event"].startswith("Traceback") and "sqlalchemy.exc." in lines[-2]["event"], done.stdout
    assert "migrations applied" not in done.stdout
    assert done.stderr == "", done.stderr

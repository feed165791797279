"""An idle node stays small (issue 35: resident memory after start, start to ready): `meadhall serve` on a
database already at head loads none of the libraries that only some requests need. Each of them is imported
by its first use (the media server, an outbound fetch, a Web Push delivery, a passkey ceremony, an image, a
link preview, a sound, a TOTP enrolment, metrics, an encryption or a VAPID key, a server-rendered page);
Alembic never (a pending migration runs in a child process, cli/first_migration.py); the Redis and asyncpg
drivers only when configured; rich (structlog's console tracebacks) not at all by `serve`.

The start runs in a fresh interpreter, the way `serve` builds it (cli/main.py): the settings, the schema
check and migration, create_app and the lifespan's start-up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine

from meadhall.db.migrate import alembic_config, current_revision, shipped_revisions
from tests.support.isolation import clean_env

# Modules a node must not hold until a request needs them (top-level names; a submodule counts).
LAZY = ("aiohttp", "livekit", "google.protobuf", "webauthn", "cbor2", "OpenSSL", "pyasn1", "pywebpush",
        "py_vapid", "http_ece", "requests", "PIL", "selectolax", "ijson", "mutagen", "segno", "prometheus_client",
        "alembic", "mako", "redis", "asyncpg", "rich", "pygments", "cryptography", "jinja2")

START = r'''
import asyncio, json, sys

from meadhall.cli import main as cli
from meadhall.app import create_app

settings = cli.settings_for(None)
cli.migrate_before_serving(settings, None)
app = create_app(settings)


async def start() -> list[str]:
    async with app.router.lifespan_context(app):
        lazy = json.loads(sys.argv[1])
        return sorted(m for m in sys.modules if any(m == name or m.startswith(name + ".") for name in lazy))


print(json.dumps(asyncio.run(start())))
'''


def _run(code: str, env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _loaded_at_start(env: dict[str, str]) -> list[str]:
    return list(json.loads(_run(START, env, json.dumps(LAZY)).splitlines()[-1]))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(DATA_DIR=str(tmp_path / "data"), SECRET_KEY="lazy-imports-secret-0123456789abcdef0123",
                     LOG_LEVEL="warning")


def test_a_node_started_on_a_database_at_head_loads_none_of_the_lazy_libraries(env: dict[str, str]) -> None:
    _run("from meadhall.cli.main import main; main()", env, "migrate")
    assert _loaded_at_start(env) == []


def test_a_first_start_on_a_new_database_migrates_it_and_loads_none_of_the_lazy_libraries(
        env: dict[str, str], tmp_path: Path) -> None:
    assert _loaded_at_start(env) == []  # a new database: a child process applies every migration
    engine = create_engine(f"sqlite:///{tmp_path / 'data' / 'chat.db'}")
    try:
        with engine.connect() as conn:
            assert current_revision(conn) == shipped_revisions()[-1]
    finally:
        engine.dispose()


def test_the_shipped_revisions_are_alembics_and_the_last_is_its_head() -> None:
    script = ScriptDirectory.from_config(alembic_config())
    assert shipped_revisions() == [rev.revision for rev in reversed(list(script.walk_revisions()))]
    assert list(script.get_heads()) == [shipped_revisions()[-1]]


def test_the_revision_is_read_as_alembic_reads_it(tmp_path: Path) -> None:
    """The plain query that spares Alembic at start agrees with Alembic: no table, an empty table, a stamp."""
    engine = create_engine(f"sqlite:///{tmp_path / 'revision.db'}")
    try:
        with engine.begin() as conn:
            assert current_revision(conn) is None
            context = MigrationContext.configure(conn)
            context._ensure_version_table()
            assert current_revision(conn) is None and context.get_current_heads() == ()
            context.stamp(ScriptDirectory.from_config(alembic_config()), shipped_revisions()[3])
            assert current_revision(conn) == shipped_revisions()[3] == context.get_current_heads()[0]
    finally:
        engine.dispose()

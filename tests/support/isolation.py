"""Isolation for tests that start from nothing (migrations, `meadhall migrate`, processes starting
together, configuration): fresh empty databases and an environment free of configuration variables.

SQLite needs only a new directory; PostgreSQL gets a new database `mh_mig_<random>` beside
TEST_DATABASE_URL, dropped WITH (FORCE) afterwards."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg
from sqlalchemy.engine import make_url

TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL") or None
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL") or None

# Every configuration variable (docs/reference/configuration.md).
CONFIG_VARIABLES = (
    "DATA_DIR", "DATABASE_URL", "REDIS_URL", "DOMAIN", "PUBLIC_URL", "TLS_ENABLED", "HOST", "PORT", "NODE_ID",
    "REGISTRATION_ENABLED", "MAX_UPLOAD_SIZE", "UNFURL_ENABLED", "VAPID_PRIVATE_KEY", "VAPID_SUBJECT",
    "MEDIA_API_KEY", "MEDIA_API_SECRET", "MEDIA_API_URL", "MEDIA_PUBLIC_URL", "SECRET_KEY", "SESSION_TTL_DAYS",
    "SESSION_ROTATE_HOURS", "LEAKED_PASSWORDS_FILE", "RATE_LIMITS", "TRUST_PROXY", "CORS_ALLOWED_ORIGINS",
    "LOG_LEVEL", "METRICS_ENABLED",
)


def clean_env(**values: str) -> dict[str, str]:
    """The current environment without any configuration variable, plus `values` (for subprocesses)."""
    env = {k: v for k, v in os.environ.items() if k not in CONFIG_VARIABLES}
    env.update(values)
    return env


def _url_for(database: str) -> str:
    assert TEST_DATABASE_URL, "TEST_DATABASE_URL is not set"
    url = make_url(TEST_DATABASE_URL).set(drivername="postgresql", database=database)
    return url.render_as_string(hide_password=False)


async def _admin(sql: str) -> None:
    conn = await asyncpg.connect(_url_for("postgres"))
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def run_admin(sql: str) -> None:
    """Run one statement on the server's `postgres` database (CREATE / DROP DATABASE)."""
    asyncio.run(_admin(sql))


@contextmanager
def fresh_postgres() -> Iterator[str]:
    """Yield the plain `postgresql://` URL of a new, empty database; drop it on exit.

    Synchronous (it runs its own event loop): use it from sync fixtures and tests."""
    name = f"mh_mig_{uuid.uuid4().hex[:12]}"
    run_admin(f'CREATE DATABASE "{name}"')
    try:
        yield _url_for(name)
    finally:
        run_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def async_url(url: str) -> str:
    """The SQLAlchemy async form of a plain `postgresql://` URL."""
    return "postgresql+asyncpg://" + url.split("://", 1)[1]

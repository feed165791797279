"""Running the numbered migrations (docs/architecture.md) on an empty database: SQLite always, PostgreSQL with
TEST_DATABASE_URL (a fresh database of tests/support/isolation.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from sqlalchemy.ext.asyncio import AsyncEngine

from meadhall.db.migrate import alembic_config
from tests.support.isolation import TEST_DATABASE_URL, async_url, fresh_postgres

BACKENDS = ["sqlite"] + (["postgres"] if TEST_DATABASE_URL else [])


@contextmanager
def empty_database(backend: str, directory: Path) -> Iterator[str]:
    """The async URL of an empty database of `backend` (a SQLite file in `directory`)."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{directory / 'chat.db'}"
        return
    with fresh_postgres() as url:
        yield async_url(url)


async def upgrade_to(engine: AsyncEngine, revision: str) -> None:
    """Apply the migrations up to `revision`."""
    async with engine.connect() as conn:
        await conn.run_sync(lambda sync_conn: command.upgrade(alembic_config(sync_conn), revision))
        await conn.commit()

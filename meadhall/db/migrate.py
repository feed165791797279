"""Apply the numbered Alembic migrations, under a cross-process lock (two nodes starting together
migrate once: the second waits for the lock, then finds nothing pending)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from meadhall.db import dialect

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def alembic_config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["connection"] = connection
    cfg.attributes["applied"] = []
    return cfg


def shipped_revisions() -> list[str]:
    """Revision ids from oldest to newest."""
    script = ScriptDirectory.from_config(alembic_config())
    return [rev.revision for rev in reversed(list(script.walk_revisions()))]


def _upgrade(connection: Connection) -> list[str]:
    cfg = alembic_config(connection)
    command.upgrade(cfg, "head")
    return list(cfg.attributes["applied"])


async def migrate(engine: AsyncEngine) -> list[str]:
    """Apply pending migrations; returns the revision ids applied by this call."""
    async with dialect.migration_connection(engine) as conn:
        applied = await conn.run_sync(_upgrade)
        await conn.commit()
    return applied

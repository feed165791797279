"""Apply the numbered Alembic migrations, under a cross-process lock (two nodes starting together
migrate once: the second waits for the lock, then finds nothing pending).

A database stamped with a revision this code does not ship was written by a newer Meadhall: nothing
here may touch it (an older layout's queries would corrupt it), so start-up and `migrate` refuse it."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from meadhall import __version__
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


class SchemaTooNew(Exception):
    """The database's revision is unknown to this code; the message is one line for the operator."""


def check_known(revision: str | None) -> None:
    """Raise SchemaTooNew unless `revision` is one this code ships (None: a database never migrated)."""
    shipped = shipped_revisions()
    if revision is not None and revision not in shipped:
        raise SchemaTooNew(
            f"the database schema is at revision {revision}, which Meadhall {__version__} does not know "
            f"(its newest is {shipped[-1]}): it was written by a newer version; run that version, or "
            "restore a backup taken with this one")


def current_revision(connection: Connection) -> str | None:
    heads = MigrationContext.configure(connection).get_current_heads()
    return heads[0] if heads else None


async def schema_revision(engine: AsyncEngine) -> str | None:
    """The revision the database is stamped with (None when it was never migrated)."""
    async with engine.connect() as conn:
        return await conn.run_sync(current_revision)


def _upgrade(connection: Connection) -> list[str]:
    check_known(current_revision(connection))
    cfg = alembic_config(connection)
    command.upgrade(cfg, "head")
    return list(cfg.attributes["applied"])


async def migrate(engine: AsyncEngine) -> list[str]:
    """Apply pending migrations; returns the revision ids applied by this call."""
    async with dialect.migration_connection(engine) as conn:
        applied = await conn.run_sync(_upgrade)
        await conn.commit()
    return applied

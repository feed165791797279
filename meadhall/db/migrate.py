"""Apply the numbered Alembic migrations, under a cross-process lock (two nodes starting together
migrate once: the second waits for the lock, then finds nothing pending).

A database stamped with a revision this code does not ship was written by a newer Meadhall: nothing
here may touch it (an older layout's queries would corrupt it), so start-up and `migrate` refuse it.

Alembic (some 9 MiB of modules, with Mako) is imported only when a migration is pending: the shipped
revisions are the file names in migrations/versions (tests/db/test_migrations.py holds every revision id
equal to its file's stem, in one linear chain), and the database's revision is one plain query, so a
start on a database already at head never loads it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import column, inspect, select, table
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from meadhall import __version__
from meadhall.db import dialect

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# Alembic's bookkeeping table (its default name, which env.py keeps).
VERSION_TABLE = table("alembic_version", column("version_num"))
_REVISION_FILE = re.compile(r"^\d{4}_\w+\.py$")


def alembic_config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["connection"] = connection
    cfg.attributes["applied"] = []
    return cfg


def shipped_revisions() -> list[str]:
    """Revision ids from oldest to newest: the stems of migrations/versions/NNNN_name.py in order."""
    return sorted(p.stem for p in (MIGRATIONS_DIR / "versions").iterdir() if _REVISION_FILE.match(p.name))


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
    """The revision in Alembic's table, read the way Alembic reads it (one row; none before the first
    migration, no table in a new database)."""
    if not inspect(connection).has_table(VERSION_TABLE.name):
        return None
    return connection.execute(select(VERSION_TABLE.c.version_num)).scalar()


async def schema_revision(engine: AsyncEngine) -> str | None:
    """The revision the database is stamped with (None when it was never migrated)."""
    async with engine.connect() as conn:
        return await conn.run_sync(current_revision)


def _upgrade(connection: Connection) -> list[str]:
    revision = current_revision(connection)
    check_known(revision)
    if revision == shipped_revisions()[-1]:
        return []
    from alembic import command

    cfg = alembic_config(connection)
    command.upgrade(cfg, "head")
    applied: Any = cfg.attributes["applied"]
    return list(applied)


async def migrate(engine: AsyncEngine) -> list[str]:
    """Apply pending migrations; returns the revision ids applied by this call."""
    async with dialect.migration_connection(engine) as conn:
        applied = await conn.run_sync(_upgrade)
        await conn.commit()
    return applied

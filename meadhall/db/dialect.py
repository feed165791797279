"""The ONLY module that knows which database is in use (house rule 8).

Everything that differs between SQLite and PostgreSQL lives here: transaction start, upserts, the
migration lock, and (later) search.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Table, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

WRITE_OPTION = "meadhall_write"
_MIGRATION_LOCK_KEY = 0x6D656164  # "mead": pg_advisory_lock key for migrations


def name_of(bind: AsyncConnection | AsyncEngine) -> str:
    return bind.dialect.name


def is_sqlite(bind: AsyncConnection | AsyncEngine) -> bool:
    return bind.dialect.name == "sqlite"


def sqlite_begin_statement(options: Mapping[str, Any]) -> str:
    # A write transaction takes the lock up front: a deferred transaction that reads and then writes
    # can fail with SQLITE_BUSY without waiting for the busy timeout.
    return "BEGIN IMMEDIATE" if options.get(WRITE_OPTION) else "BEGIN"


def insert_ignore(conn: AsyncConnection, table: Table, values: dict[str, Any] | list[dict[str, Any]]):
    """INSERT ... ON CONFLICT DO NOTHING."""
    mod = sqlite if is_sqlite(conn) else postgresql
    return mod.insert(table).values(values).on_conflict_do_nothing()


def upsert(conn: AsyncConnection, table: Table, values: dict[str, Any], keys: list[str], update: list[str]):
    """INSERT ... ON CONFLICT (keys) DO UPDATE SET update columns to the new values."""
    mod = sqlite if is_sqlite(conn) else postgresql
    stmt = mod.insert(table).values(values)
    return stmt.on_conflict_do_update(index_elements=keys, set_={c: stmt.excluded[c] for c in update})


@asynccontextmanager
async def migration_lock(conn: AsyncConnection) -> AsyncIterator[None]:
    """Hold an exclusive lock across processes while migrating.

    PostgreSQL: a session advisory lock on the migrating connection. SQLite: an flock on a file beside
    the database (SQLite is single-machine by nature, so a file lock covers every process).
    """
    if not is_sqlite(conn):
        await conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _MIGRATION_LOCK_KEY})
        await conn.commit()
        try:
            yield
        finally:
            await conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _MIGRATION_LOCK_KEY})
            await conn.commit()
        return
    database = conn.engine.url.database or ""
    if database in ("", ":memory:"):
        yield
        return
    lock_path = Path(database + ".migrate.lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


async def database_size_bytes(conn: AsyncConnection) -> int:
    if is_sqlite(conn):
        pages = (await conn.execute(text("PRAGMA page_count"))).scalar_one()
        size = (await conn.execute(text("PRAGMA page_size"))).scalar_one()
        return int(pages) * int(size)
    return int((await conn.execute(text("SELECT pg_database_size(current_database())"))).scalar_one())


async def list_tables(conn: AsyncConnection) -> list[str]:
    if is_sqlite(conn):
        rows = await conn.execute(text("SELECT name FROM sqlite_master WHERE type='table'"))
    else:
        rows = await conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"))
    return sorted(r[0] for r in rows)


async def truncate_all(conn: AsyncConnection, tables: list[str]) -> None:
    """Empty the given tables (test isolation on a shared database)."""
    if not tables:
        return
    if is_sqlite(conn):
        await conn.execute(text("PRAGMA foreign_keys=OFF"))
        for name in tables:
            await conn.execute(text(f'DELETE FROM "{name}"'))  # noqa: S608 - names from the schema
        await conn.execute(text("PRAGMA foreign_keys=ON"))
    else:
        quoted = ", ".join(f'"{n}"' for n in tables)
        await conn.execute(text(f"TRUNCATE {quoted} RESTART IDENTITY CASCADE"))

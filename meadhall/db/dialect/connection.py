"""Connections, transactions and locks as each database needs them: how a SQLite transaction begins, the
per-process writer queue of SQLite, the migration lock, transaction locks, one-snapshot reads, and the
catalogue (size, tables, emptying them for tests)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import weakref
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

WRITE_OPTION = "meadhall_write"
READ_OPTION = "meadhall_read"
_MIGRATION_LOCK_KEY = 0x6D656164  # "mead": pg_advisory_lock key for migrations


def is_sqlite(bind: AsyncConnection | AsyncEngine) -> bool:
    return bind.dialect.name == "sqlite"


def sqlite_begin_statement(options: Mapping[str, Any]) -> str | None:
    """What a SQLite transaction starts with. A write transaction takes the lock up front: a deferred
    transaction that reads and then writes can fail with SQLITE_BUSY without waiting. A read-only unit
    of work starts none: in WAL mode each statement reads a consistent snapshot, and skipping
    BEGIN/COMMIT halves the statements of a typical read request."""
    if options.get(WRITE_OPTION):
        return "BEGIN IMMEDIATE"
    if options.get(READ_OPTION):
        return None
    return "BEGIN"


_WRITE_LOCKS: weakref.WeakKeyDictionary[Any, asyncio.Lock] = weakref.WeakKeyDictionary()


def write_lock(engine: AsyncEngine) -> Any:
    """Serialise write transactions of this process on SQLite.

    SQLite has one writer at a time and its statements run on the event loop thread
    (db/sqlite_inline.py): a second BEGIN IMMEDIATE would block the loop waiting for a lock that only
    the loop can release. Queuing writers on an asyncio lock first keeps the loop free. PostgreSQL
    needs nothing: its writers wait in the server."""
    if not is_sqlite(engine):
        return contextlib.nullcontext()
    lock = _WRITE_LOCKS.get(engine.sync_engine)
    if lock is None:
        lock = _WRITE_LOCKS[engine.sync_engine] = asyncio.Lock()
    return lock


@asynccontextmanager
async def migration_connection(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A connection held under an exclusive lock across processes, for migrating.

    PostgreSQL: a session advisory lock on that connection. SQLite: an flock on a file beside the
    database, taken BEFORE the first connection: connecting switches an empty database to WAL, which
    needs SQLite's exclusive lock and would fail in a second process starting at the same moment.
    """
    if not is_sqlite(engine):
        async with engine.connect() as conn:
            await conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _MIGRATION_LOCK_KEY})
            await conn.commit()
            try:
                yield conn
            finally:
                await conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _MIGRATION_LOCK_KEY})
                await conn.commit()
        return
    database = engine.url.database or ""
    if database in ("", ":memory:"):
        async with engine.connect() as conn:
            yield conn
        return
    Path(database).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(database + ".migrate.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
        async with engine.connect() as conn:
            yield conn
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


async def transaction_lock(conn: AsyncConnection, key: int) -> None:
    """Hold an exclusive lock named by `key` until the transaction ends, for a rule spanning rows no single
    row lock covers (one main server; settings written before their row exists). PostgreSQL: an advisory
    transaction lock; SQLite's writers are serial already."""
    if not is_sqlite(conn):
        await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})


@asynccontextmanager
async def snapshot_read(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A read-only transaction whose statements all see one snapshot, for a walk over many pages that
    must agree with a row read at its end (audit-verify, docs/audit.md). PostgreSQL: REPEATABLE READ;
    SQLite (WAL): a deferred BEGIN keeps the snapshot of its first read until it ends."""
    async with engine.connect() as conn:
        if not is_sqlite(conn):
            conn = await conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        async with conn.begin():
            yield conn


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
        # DELETE rather than TRUNCATE: a test leaves a few rows behind, and TRUNCATE gives every table a
        # new file (~0.1 s for the schema, per test). Foreign-key triggers are off for the statement so the
        # order does not matter; no table has a sequence to restart. One round trip for all of them.
        deletes = "".join(f'DELETE FROM "{n}";' for n in tables)  # noqa: S608 - names from the schema
        driver = (await conn.get_raw_connection()).driver_connection
        assert driver is not None
        # asyncpg runs a statement without arguments through the simple protocol, several at once.
        await driver.execute(f"SET LOCAL session_replication_role = replica;{deletes}")

"""Engine factory: SQLite (WAL, foreign keys, busy timeout, synchronous=NORMAL) or PostgreSQL (asyncpg)."""

from __future__ import annotations

import itertools
import sqlite3
import time
import weakref
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.dialects import registry
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from meadhall.db import dialect
from meadhall.db.sqlite_inline import inline_engine

SQLITE_BUSY_TIMEOUT_MS = 10_000
WROTE_FLAG = "meadhall_wrote"

registry.register("sqlite.meadhall_inline", "meadhall.db.sqlite_inline", "InlineSQLiteDialect")


def create_engine(url: str, *, echo: bool = False) -> AsyncEngine:
    """`hide_parameters`: a database error's message (logged with its trace) and echoed SQL name no bound
    values, which carry password and token hashes, encrypted fields and user input."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # aiosqlite URLs (settings, tests, tools) are served by the inline driver (see db/sqlite_inline.py):
        # aiosqlite itself is never imported, so it is no dependency.
        url = parsed.set(drivername="sqlite+meadhall_inline").render_as_string(hide_password=False)
        # Every checkout ends its own transaction, so the pool's extra rollback on return is skipped.
        engine = inline_engine(create_async_engine(url, echo=echo, pool_reset_on_return=None, hide_parameters=True,
                                                   connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}))
        _configure_sqlite(engine)
        _track_writes(engine)
        return engine
    engine = create_async_engine(url, echo=echo, pool_size=10, max_overflow=20, pool_pre_ping=True,
                                 hide_parameters=True)
    _track_writes(engine)
    return engine


_DML = ("INSERT", "UPDATE", "DELETE", "REPLAC")


def _track_writes(engine: AsyncEngine) -> None:
    """Flag connections whose transaction wrote rows (a versioned cache must not keep what such a
    transaction reads, see db/kept.py). The flag is reset when a unit of work begins."""

    @event.listens_for(engine.sync_engine, "before_cursor_execute")
    def _on_execute(conn: Any, _cursor: Any, statement: str, _params: Any, _context: Any, _many: bool) -> None:
        if statement.lstrip()[:6].upper() in _DML:
            conn.info[WROTE_FLAG] = True


def _enter_wal(cursor: Any) -> None:
    """Switching a database to WAL needs its exclusive lock, and SQLite answers "database is locked" at once,
    without the busy handler, when another process holds a shared lock and wants to switch too (two nodes
    starting on a fresh file): waiting a moment and asking again is what the busy handler would have done."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from the driver so BEGIN IMMEDIATE can be issued for writes.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        _enter_wal(cursor)
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        # NORMAL in WAL mode: a power loss may lose the last commits but never corrupts the database.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        statement = dialect.sqlite_begin_statement(conn.get_execution_options())
        if statement:
            # Straight to the driver: through exec_driver_sql this cost a statement's worth of SQLAlchemy
            # bookkeeping on every unit of work (the driver runs in autocommit mode, so SQLAlchemy keeps no
            # transaction state of its own to update).
            conn.connection.driver_connection.execute(statement)


# Per-process caches key their entries by engine: tests (and tools) run several engines in one process.
# A token, unlike id(), is never reused by a later engine.
_ENGINE_TOKENS: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_TOKENS = itertools.count(1)


def engine_token(bind: AsyncConnection | AsyncEngine) -> int:
    """A small number naming the engine (or the connection's engine) for as long as it lives."""
    engine = bind.sync_engine
    token = _ENGINE_TOKENS.get(engine)
    if token is None:
        token = _ENGINE_TOKENS[engine] = next(_TOKENS)
    return token

"""SQLite driven synchronously on the event loop thread, behind SQLAlchemy's async API.

aiosqlite runs every statement on a worker thread: two thread hand-offs and a loop wake-up per call cost
~0.3 ms of CPU, against ~10 us for the statement itself, which made SQLite the bottleneck of every
request. SQLite statements are microseconds and never wait on the network, so running them inline is
cheaper. The one way they could block the loop, waiting for another connection's write lock, is ruled
out by `dialect.write_lock` (one write transaction per process at a time; WAL readers never wait).
"""

from __future__ import annotations

import sqlite3
from collections import deque
from typing import Any

from sqlalchemy import pool
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.engine.url import URL
from sqlalchemy.util.concurrency import await_, in_greenlet


async def _ready() -> None:
    return None


def _yield_point() -> None:
    # SQLAlchemy's async API insists that a driver awaits at least once per operation; awaiting a
    # finished coroutine satisfies it without leaving the thread or the event loop iteration.
    if in_greenlet():
        await_(_ready())


class _Cursor:
    """Buffers each result set right after execution, like SQLAlchemy's async cursor adapters do, so
    results stay readable after the async layer soft-closes the cursor."""

    __slots__ = ("_cursor", "_rows")

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor
        self._rows: deque[Any] = deque()

    def execute(self, operation: Any, parameters: Any = ()) -> Any:
        _yield_point()
        self._cursor.execute(operation, parameters)
        self._rows = deque(self._cursor.fetchall()) if self._cursor.description else deque()
        return self

    def executemany(self, operation: Any, seq_of_parameters: Any) -> Any:
        _yield_point()
        self._cursor.executemany(operation, seq_of_parameters)
        self._rows = deque()
        return self

    async def _async_soft_close(self) -> None:
        return None

    def fetchone(self) -> Any:
        return self._rows.popleft() if self._rows else None

    def fetchmany(self, size: int | None = None) -> list[Any]:
        count = min(size or self._cursor.arraysize, len(self._rows))
        return [self._rows.popleft() for _ in range(count)]

    def fetchall(self) -> list[Any]:
        rows = list(self._rows)
        self._rows.clear()
        return rows

    def close(self) -> None:
        self._rows.clear()
        self._cursor.close()

    def __iter__(self) -> Any:
        while self._rows:
            yield self._rows.popleft()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


class _Connection:
    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        object.__setattr__(self, "_conn", conn)

    def cursor(self) -> _Cursor:
        return _Cursor(self._conn.cursor())

    def execute(self, *args: Any) -> Any:
        _yield_point()
        return self._conn.execute(*args)

    def commit(self) -> None:
        _yield_point()
        self._conn.commit()

    def rollback(self) -> None:
        _yield_point()
        self._conn.rollback()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._conn, name, value)


class InlineSQLiteDialect(SQLiteDialect_pysqlite):
    """The pysqlite dialect, declared async so `create_async_engine` accepts it."""

    driver = "meadhall_inline"
    is_async = True
    supports_statement_cache = True

    @classmethod
    def get_pool_class(cls, url: URL) -> type[pool.Pool]:
        if cls._is_url_file_db(url):
            return pool.AsyncAdaptedQueuePool
        return pool.StaticPool

    def connect(self, *cargs: Any, **cparams: Any) -> Any:
        # Pooled connections may be closed from SQLAlchemy's cleanup paths on other threads.
        cparams["check_same_thread"] = False
        return _Connection(sqlite3.connect(*cargs, **cparams))

    def get_driver_connection(self, connection: Any) -> Any:
        return connection


dialect = InlineSQLiteDialect

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
from sqlalchemy import types as sqltypes
from sqlalchemy.dialects.sqlite.base import _SQliteJson
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.engine.url import URL
from sqlalchemy.exc import InvalidRequestError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncTransaction
from sqlalchemy.util.concurrency import await_, greenlet_spawn, in_greenlet


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


class InlinePool(pool.QueuePool):
    """A queue pool that never waits for a connection: past `pool_size` it opens one more (closed again
    on return). Waiting would need a greenlet, and a connection is held only while a unit of work runs,
    so more than a handful are rarely out at once."""

    _is_asyncio = True  # usable by the async engine: it never blocks, so it never needs the loop

    def __init__(self, creator: Any, **kw: Any) -> None:
        kw["max_overflow"] = -1
        super().__init__(creator, **kw)


# JSON columns read back as these texts most of the time (no mentions, no system event); json.loads costs
# about 2 us even for "[]", and a page of 50 messages decodes 150 of them.
_COMMON_JSON: dict[str, Any] = {"[]": list, "null": lambda: None, "{}": dict}


class _FastJSON(_SQliteJson):
    def result_processor(self, dialect: Any, coltype: Any) -> Any:
        default = super().result_processor(dialect, coltype)
        common = _COMMON_JSON.get

        def process(value: Any) -> Any:
            make = common(value) if value.__class__ is str else None
            return make() if make is not None else default(value)

        return process


class InlineSQLiteDialect(SQLiteDialect_pysqlite):
    """The pysqlite dialect, declared async so `create_async_engine` accepts it."""

    driver = "meadhall_inline"
    is_async = True
    supports_statement_cache = True
    colspecs = {**SQLiteDialect_pysqlite.colspecs, sqltypes.JSON: _FastJSON}

    @classmethod
    def get_pool_class(cls, url: URL) -> type[pool.Pool]:
        if cls._is_url_file_db(url):
            return InlinePool
        return pool.StaticPool

    def connect(self, *cargs: Any, **cparams: Any) -> Any:
        # Pooled connections may be closed from SQLAlchemy's cleanup paths on other threads.
        cparams["check_same_thread"] = False
        return _Connection(sqlite3.connect(*cargs, **cparams))

    def get_driver_connection(self, connection: Any) -> Any:
        return connection


dialect = InlineSQLiteDialect


# ---- the async API without greenlets ------------------------------------------------------------------
#
# SQLAlchemy's async classes run every call (connect, execution options, begin, each statement, commit,
# close) in a new greenlet, and close in a task of its own: about 15 us per statement and 100 us per
# unit of work here, more than the statements cost. With this driver nothing ever waits, so the
# classes below call the synchronous API directly. Only engines of this driver use them (db/engine.py);
# run_sync and stream keep the greenlet path (and `_yield_point` above serves them).


class InlineAsyncTransaction(AsyncTransaction):
    __slots__ = ()

    async def start(self, is_ctxmanager: bool = False) -> AsyncTransaction:
        conn = self.connection._proxied
        self.sync_transaction = self._assign_proxied(conn.begin_nested() if self.nested else conn.begin())
        if is_ctxmanager:
            self.sync_transaction.__enter__()
        return self

    async def close(self) -> None:
        self._proxied.close()

    async def rollback(self) -> None:
        self._proxied.rollback()

    async def commit(self) -> None:
        self._proxied.commit()

    async def __aexit__(self, type_: Any, value: Any, traceback: Any) -> None:
        self._proxied.__exit__(type_, value, traceback)


class InlineAsyncConnection(AsyncConnection):
    __slots__ = ()

    async def start(self, is_ctxmanager: bool = False) -> AsyncConnection:
        if self.sync_connection:
            raise InvalidRequestError("connection is already started")
        engine = self.sync_engine
        if isinstance(engine.pool, InlinePool) and engine.pool.checkedin():
            self.sync_connection = self._assign_proxied(engine.connect())
        else:
            # A new DB-API connection: its first-connect hooks take an async lock, which needs a greenlet.
            self.sync_connection = self._assign_proxied(await greenlet_spawn(engine.connect))
        return self

    def begin(self) -> AsyncTransaction:
        assert self._proxied
        return InlineAsyncTransaction(self)

    def begin_nested(self) -> AsyncTransaction:
        assert self._proxied
        return InlineAsyncTransaction(self, nested=True)

    async def execution_options(self, **opt: Any) -> AsyncConnection:
        conn = self._proxied
        assert conn.execution_options(**opt) is conn
        return self

    async def commit(self) -> None:
        self._proxied.commit()

    async def rollback(self) -> None:
        self._proxied.rollback()

    async def close(self) -> None:
        self._proxied.close()

    async def exec_driver_sql(self, statement: str, parameters: Any = None, execution_options: Any = None) -> Any:
        return self._proxied.exec_driver_sql(statement, parameters, execution_options)

    async def execute(self, statement: Any, parameters: Any = None, *, execution_options: Any = None) -> Any:
        return self._proxied.execute(statement, parameters, execution_options=execution_options)

    async def __aexit__(self, type_: Any, value: Any, traceback: Any) -> None:
        self._proxied.close()


class InlineAsyncEngine(AsyncEngine):
    __slots__ = ()
    _connection_cls = InlineAsyncConnection


def inline_engine(engine: AsyncEngine) -> AsyncEngine:
    """`engine` (of this driver) with the greenlet-free connection classes."""
    assert isinstance(engine.sync_engine.dialect, InlineSQLiteDialect)
    return InlineAsyncEngine(engine.sync_engine)

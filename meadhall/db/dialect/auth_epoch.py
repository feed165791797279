"""Reading the session epoch: `auth_epoch.value`, which the triggers of migration 0009 raise whenever a
session or an account's standing changes (meadhall/db/migrations/frozen/auth_epoch_0009.py says when).
The session cache (auth/sessions.py) trusts an entry only while the epoch it was read under is current."""

from __future__ import annotations

import weakref
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine

from meadhall.db.dialect.connection import is_sqlite

_READ_AUTH_EPOCH = "SELECT value FROM auth_epoch WHERE id = 1"
# SQLite: one plain connection per engine that does nothing but read the epoch (a few microseconds, where
# a pooled connection through SQLAlchemy costs tens). Autocommit: every read sees the last commit.
_EPOCH_READERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _sqlite_epoch_reader(engine: AsyncEngine) -> Any:
    sync_engine = engine.sync_engine
    reader = _EPOCH_READERS.get(sync_engine)
    if reader is None:
        database = engine.url.database
        if not database or database == ":memory:" or database.startswith("file:"):
            return None
        import sqlite3

        reader = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
        _EPOCH_READERS[sync_engine] = reader

        @event.listens_for(sync_engine, "engine_disposed", once=True)
        def _close(_engine: Any) -> None:
            closing = _EPOCH_READERS.pop(sync_engine, None)
            if closing is not None:
                closing.close()
    return reader


async def auth_epoch(engine: AsyncEngine) -> int:
    """The current session epoch (0 while no trigger has fired)."""
    reader = _sqlite_epoch_reader(engine) if is_sqlite(engine) else None
    if reader is not None:
        row = reader.execute(_READ_AUTH_EPOCH).fetchone()
    else:
        async with engine.connect() as conn:
            row = (await conn.execute(text(_READ_AUTH_EPOCH))).first()
    return int(row[0]) if row else 0

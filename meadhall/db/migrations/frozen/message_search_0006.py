"""The message-search objects of revision 0006_message_search: an FTS5 trigram table over
messages.content_norm, kept by triggers, on SQLite; pg_trgm and a GIN trigram index on PostgreSQL. Why
these, and the queries that use them: meadhall/db/dialect/search.py.

Frozen (meadhall/db/migrations/frozen/__init__.py): never edited once shipped."""

from __future__ import annotations

from typing import Any

SEARCH_FTS_TABLE = "messages_search"
SEARCH_TRIGRAM_INDEX = "ix_messages_content_norm_trgm"
_SQLITE_TRIGRAM_SINCE = (3, 34, 0)

# SEARCH_FTS_TABLE written out. The FTS5 table reads its text from messages.content_norm ("external
# content"), so the text is stored once; columnsize=0 because results are never ranked.
_SQLITE_SEARCH_DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS messages_search USING fts5(content_norm, content='messages', "
    "content_rowid='id', tokenize='trigram case_sensitive 1', columnsize=0)",
    "CREATE TRIGGER IF NOT EXISTS messages_search_insert AFTER INSERT ON messages BEGIN "
    "INSERT INTO messages_search(rowid, content_norm) VALUES (new.id, new.content_norm); END",
    "CREATE TRIGGER IF NOT EXISTS messages_search_delete AFTER DELETE ON messages BEGIN "
    "INSERT INTO messages_search(messages_search, rowid, content_norm) "
    "VALUES ('delete', old.id, old.content_norm); END",
    "CREATE TRIGGER IF NOT EXISTS messages_search_update AFTER UPDATE OF content_norm ON messages "
    "WHEN old.content_norm IS NOT new.content_norm BEGIN "
    "INSERT INTO messages_search(messages_search, rowid, content_norm) "
    "VALUES ('delete', old.id, old.content_norm); "
    "INSERT INTO messages_search(rowid, content_norm) VALUES (new.id, new.content_norm); END",
    # Index the rows that exist already (and repair an index created by hand); cheap on an empty table.
    "INSERT INTO messages_search(messages_search) VALUES ('rebuild')",
)

_POSTGRES_SEARCH_DDL = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    f"CREATE INDEX IF NOT EXISTS {SEARCH_TRIGRAM_INDEX} ON messages USING gin (content_norm gin_trgm_ops)",
)


def create_message_search(op: Any) -> None:
    """Create the search objects in a migration (`op` is alembic.op); tolerates them existing."""
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        version = bind.exec_driver_sql("SELECT sqlite_version()").scalar_one()
        if tuple(int(p) for p in version.split(".")[:3]) < _SQLITE_TRIGRAM_SINCE:
            raise RuntimeError(f"message search needs SQLite 3.34 or newer (FTS5 trigram tokenizer); found {version}")
        statements: tuple[str, ...] = _SQLITE_SEARCH_DDL
    else:
        statements = _POSTGRES_SEARCH_DDL
    for statement in statements:
        op.execute(statement)


def drop_message_search(op: Any) -> None:
    if op.get_bind().dialect.name == "sqlite":
        for suffix in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS {SEARCH_FTS_TABLE}_{suffix}")
        op.execute(f"DROP TABLE IF EXISTS {SEARCH_FTS_TABLE}")
        return
    op.execute(f"DROP INDEX IF EXISTS {SEARCH_TRIGRAM_INDEX}")  # pg_trgm stays: other objects may use it

"""The user-search objects of revision 0018_user_search: an FTS5 trigram table over the two names of
`users` on SQLite, a GIN trigram index per name on PostgreSQL (meadhall/db/dialect/search.py, "user
search").

Frozen (meadhall/db/migrations/frozen/__init__.py): never edited once shipped."""

from __future__ import annotations

from typing import Any

from meadhall.db.migrations.frozen import run_for_database

USER_FTS_TABLE = "users_search"
USER_TRIGRAM_INDEXES = ("ix_users_username_norm_trgm", "ix_users_display_name_norm_trgm")
# USER_FTS_TABLE written out (as the message search table): the text stays in `users`.
_SQLITE_USER_SEARCH_DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS users_search USING fts5(username_norm, display_name_norm, content='users', "
    "content_rowid='id', tokenize='trigram case_sensitive 1', columnsize=0)",
    "CREATE TRIGGER IF NOT EXISTS users_search_insert AFTER INSERT ON users BEGIN "
    "INSERT INTO users_search(rowid, username_norm, display_name_norm) "
    "VALUES (new.id, new.username_norm, new.display_name_norm); END",
    "CREATE TRIGGER IF NOT EXISTS users_search_delete AFTER DELETE ON users BEGIN "
    "INSERT INTO users_search(users_search, rowid, username_norm, display_name_norm) "
    "VALUES ('delete', old.id, old.username_norm, old.display_name_norm); END",
    "CREATE TRIGGER IF NOT EXISTS users_search_update AFTER UPDATE OF username_norm, display_name_norm ON users "
    "WHEN old.username_norm IS NOT new.username_norm OR old.display_name_norm IS NOT new.display_name_norm BEGIN "
    "INSERT INTO users_search(users_search, rowid, username_norm, display_name_norm) "
    "VALUES ('delete', old.id, old.username_norm, old.display_name_norm); "
    "INSERT INTO users_search(rowid, username_norm, display_name_norm) "
    "VALUES (new.id, new.username_norm, new.display_name_norm); END",
    "INSERT INTO users_search(users_search) VALUES ('rebuild')",
)
_POSTGRES_USER_SEARCH_DDL = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    *(f"CREATE INDEX IF NOT EXISTS {index} ON users USING gin ({column} gin_trgm_ops)"
      for index, column in zip(USER_TRIGRAM_INDEXES, ("username_norm", "display_name_norm"), strict=True)),
)


def create_user_search(op: Any) -> None:
    """Create the user-search objects in a migration (`op` is alembic.op); tolerates them existing."""
    run_for_database(op, _SQLITE_USER_SEARCH_DDL, _POSTGRES_USER_SEARCH_DDL)


def drop_user_search(op: Any) -> None:
    if op.get_bind().dialect.name == "sqlite":
        for suffix in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS {USER_FTS_TABLE}_{suffix}")
        op.execute(f"DROP TABLE IF EXISTS {USER_FTS_TABLE}")
        return
    for index in USER_TRIGRAM_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {index}")

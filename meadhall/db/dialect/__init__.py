"""The ONLY package that knows which database is in use (house rule 8): everything that differs between SQLite
and PostgreSQL at run time.

- connection.py: how a SQLite transaction begins, the SQLite writer queue, the migration lock, transaction
  locks, one-snapshot reads, the database's size and tables, emptying tables for tests.
- statements.py: upserts and INSERT ... ON CONFLICT DO NOTHING; ids bound as one parameter (IdsBound) and ids
  read behind a stamp (StampedIdArray).
- search.py: substring search over messages and account names through each database's trigram index, and
  the names of the search objects, which db/schema does not describe.
- auth_epoch.py: reading the session epoch that triggers keep.

The triggers, trigger functions and search tables themselves are created by migrations, with SQL written
per database and frozen with the revision that ran it: meadhall/db/migrations/frozen/ (one module per
trigger family, named after its revision), which also explains what each family keeps and why.

Callers import the package (`from meadhall.db import dialect; dialect.upsert(...)`): every name below is the
package's surface."""

from meadhall.db.dialect.auth_epoch import auth_epoch
from meadhall.db.dialect.connection import (
    READ_OPTION,
    WRITE_OPTION,
    database_size_bytes,
    is_sqlite,
    list_tables,
    migration_connection,
    snapshot_read,
    sqlite_begin_statement,
    transaction_lock,
    truncate_all,
    write_lock,
)
from meadhall.db.dialect.search import (
    count_users_with_short_part,
    is_search_object,
    plan_with_values,
    select_messages_containing,
    user_name_contains,
)
from meadhall.db.dialect.statements import IdsBound, StampedIdArray, insert_ignore, upsert

__all__ = [
    "READ_OPTION",
    "WRITE_OPTION",
    "IdsBound",
    "StampedIdArray",
    "auth_epoch",
    "count_users_with_short_part",
    "database_size_bytes",
    "insert_ignore",
    "is_search_object",
    "is_sqlite",
    "list_tables",
    "migration_connection",
    "plan_with_values",
    "select_messages_containing",
    "snapshot_read",
    "sqlite_begin_statement",
    "transaction_lock",
    "truncate_all",
    "upsert",
    "user_name_contains",
    "write_lock",
]

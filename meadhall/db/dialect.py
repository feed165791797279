"""The ONLY module that knows which database is in use (house rule 8).

Everything that differs between SQLite and PostgreSQL lives here: transaction start, upserts, the
migration lock, and message search.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import (
    BigInteger,
    Insert,
    Integer,
    RowMapping,
    Select,
    String,
    Table,
    any_,
    bindparam,
    case,
    column,
    event,
    func,
    literal_column,
    null,
    or_,
    select,
    table,
    text,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql.base import Executable
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import ScalarSelect

from meadhall.core.ids import EPOCH_MS
from meadhall.core.text import escape_like
from meadhall.db.schema import messages, users

WRITE_OPTION = "meadhall_write"
READ_OPTION = "meadhall_read"
_MIGRATION_LOCK_KEY = 0x6D656164  # "mead": pg_advisory_lock key for migrations


def name_of(bind: AsyncConnection | AsyncEngine) -> str:
    return bind.dialect.name


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


def insert_ignore(conn: AsyncConnection, table: Table, values: dict[str, Any] | list[dict[str, Any]]) -> Insert:
    """INSERT ... ON CONFLICT DO NOTHING."""
    mod = sqlite if is_sqlite(conn) else postgresql
    return mod.insert(table).values(values).on_conflict_do_nothing()


def upsert(conn: AsyncConnection, table: Table, values: dict[str, Any], keys: list[str], update: list[str]
           ) -> Insert:
    """INSERT ... ON CONFLICT (keys) DO UPDATE SET update columns to the new values."""
    mod = sqlite if is_sqlite(conn) else postgresql
    stmt = mod.insert(table).values(values)
    return stmt.on_conflict_do_update(index_elements=keys, set_={c: stmt.excluded[c] for c in update})


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


class StampedIdArray:
    """Every value of an integer column where the conditions hold, in no particular order, behind a stamp (a scalar
    subquery of a value that changes with every change of the ids, db/schema/social.py `relationship_stamps`): one
    statement reads the stamp and, unless it equals the one the caller already holds, the ids. Both come from one
    snapshot, so the ids are those the stamp stands for. The ids come as one aggregated value: a thousand ids row by
    row through the result layer cost 0.7 ms of CPU, one array a tenth of that. Built once, for conditions whose
    values are bound parameters given at execution: building the statement cost 0.1-0.25 ms, more than running it."""

    def __init__(self, stamp: ScalarSelect[int], id_column: ColumnElement[int], *where: ColumnElement[bool]) -> None:
        held = bindparam("held_stamp", type_=BigInteger)

        def unless_held(ids: ColumnElement[Any]) -> Select[Any]:
            # A NULL stamp (none stored) never equals: the ids are read.
            return select(stamp.label("stamp"), case((stamp == held, null()), else_=ids).label("ids"))

        self._sqlite = unless_held(select(func.json_group_array(id_column)).where(*where).scalar_subquery())
        self._postgres = unless_held(select(func.array_agg(id_column)).where(*where).scalar_subquery())

    async def read(self, conn: AsyncConnection, params: Mapping[str, Any], held: int | None
                   ) -> tuple[int | None, list[int] | None]:
        """(the stamp, the ids), the ids None when the stamp is `held`."""
        sqlite = is_sqlite(conn)
        stamp, found = (await conn.execute(self._sqlite if sqlite else self._postgres,
                                           {**params, "held_stamp": held})).one()
        if stamp is not None and stamp == held:
            return stamp, None
        if sqlite:
            return stamp, orjson.loads(found)  # a third of json.loads' time for 1,000 ids
        return stamp, list(found or ())  # array_agg of no row is NULL


class IdsBound:
    """A statement holding `column IN <ids>` with the ids bound as ONE parameter: a JSON array read by
    `json_each` on SQLite, an array compared with `= ANY` on PostgreSQL. An expanding IN list of a thousand
    ids (a READY's friends) cost 0.3 ms to render and bind, more than the statement's run. `build` makes the
    statement from the condition it is given for a column; both forms are built once."""

    def __init__(self, build: Callable[[Callable[[ColumnElement[int]], ColumnElement[bool]]], Executable],
                 name: str = "ids") -> None:
        self._name = name
        as_json = select(literal_column("value")).select_from(func.json_each(bindparam(name))).scalar_subquery()
        as_array = bindparam(name, type_=postgresql.ARRAY(BigInteger))
        self._sqlite = build(lambda col: col.in_(as_json))
        self._postgres = build(lambda col: col == any_(as_array))

    async def execute(self, conn: AsyncConnection, ids: Sequence[int], params: Mapping[str, Any] | None = None
                      ) -> Any:
        if is_sqlite(conn):
            return await conn.execute(self._sqlite, {**(params or {}), self._name: orjson.dumps(list(ids)).decode()})
        return await conn.execute(self._postgres, {**(params or {}), self._name: list(ids)})


async def list_tables(conn: AsyncConnection) -> list[str]:
    if is_sqlite(conn):
        rows = await conn.execute(text("SELECT name FROM sqlite_master WHERE type='table'"))
    else:
        rows = await conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"))
    return sorted(r[0] for r in rows)


def _execute_in_migration(op: Any, sqlite: Sequence[str], postgres: Sequence[str]) -> None:
    """Run the statements written for the migration's database (`op` is alembic.op), in order."""
    for statement in sqlite if op.get_bind().dialect.name == "sqlite" else postgres:
        op.execute(statement)


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


# ---- message search (docs/architecture.md) -------------------------------------------------------------------
#
# The rule: every word of the query (normalised like content_norm: NFKC + casefold) occurs in the message's
# content_norm. The API describes two methods whose results are merged: whole words / the last word as a
# prefix through a full-text index, and substrings. A whole word and a prefix are substrings, so the
# merge is exactly the substring result; what each database needs is an index that finds substrings.
#
# SQLite: `messages_search`, an FTS5 table with the trigram tokenizer over content_norm (external
#   content: the text stays in `messages`, rowid = message id), kept current by three triggers. A quoted
#   FTS5 phrase is a literal substring of 3+ characters found through the index; shorter words are
#   checked with instr() on the rows the index (or the room's newest-first scan) yields. A later
#   migration that rebuilds `messages` in batch mode drops the triggers: it must call
#   create_message_search() again.
# PostgreSQL: pg_trgm, and a GIN trigram index on content_norm: `LIKE '%word%'` (escaped) for words of 3+
#   characters goes through it; shorter words are checked with strpos(), which the planner cannot send to
#   the index (a pattern without trigrams would make it read the whole index).
#
# A tsvector index for whole words and prefixes was built and measured (100,000 messages in one room): it
# never adds a result to the substring match, and its branch of the merge cost up to 95 ms when the planner
# misjudged a prefix (a backward scan of the whole room for 'xylophone':*), against under 1 ms for the
# trigram path; so PostgreSQL, like SQLite, answers from the trigram index alone.

SEARCH_FTS_TABLE = "messages_search"
SEARCH_TRIGRAM_INDEX = "ix_messages_content_norm_trgm"
_TRIGRAM = 3  # the shortest word a trigram index can look up
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


def is_search_object(type_: str, name: str | None) -> bool:
    """True for the search objects that db/schema does not describe (raw SQL, different per database):
    the FTS5 table with its shadow tables, and the trigram index."""
    if not name:
        return False
    if type_ == "table":
        return name == USER_GRAMS_TABLE or any(name == t or name.startswith(t + "_")
                                               for t in (SEARCH_FTS_TABLE, USER_FTS_TABLE))
    return type_ == "index" and (name == SEARCH_TRIGRAM_INDEX or name in USER_SEARCH_INDEXES)


async def search_messages(conn: AsyncConnection, channel_id: int | Sequence[int], words: Sequence[str], *,
                          visible: ColumnElement[bool], before: int | None, limit: int) -> list[RowMapping]:
    """Messages of the room (or of any of the rooms, for a server-wide search) whose content_norm contains
    every word (already normalised), that pass `visible`, older than `before`; newest first, at most `limit`.
    One statement (with SET LOCAL before it on PostgreSQL)."""
    if not words:
        return []
    in_rooms = (messages.c.channel_id == channel_id if isinstance(channel_id, int)
                else messages.c.channel_id.in_(list(channel_id)))
    base: list[ColumnElement[bool]] = [in_rooms, visible]
    if is_sqlite(conn):
        stmt = _sqlite_search(words, base, before, limit)
    else:
        # The best plan depends on the words (a rare trigram: the index; a common one: the room's newest
        # rows), so plan with the values every time, never with a cached generic plan.
        await plan_with_values(conn)
        stmt = _postgres_search(words, base, before, limit)
    return list((await conn.execute(stmt)).mappings())


def _fts5_phrase(word: str) -> str:
    # Inside a double-quoted FTS5 string every character is literal text; a quote is written twice.
    return '"' + word.replace('"', '""') + '"'


def _sqlite_search(words: Sequence[str], base: list[ColumnElement[bool]], before: int | None, limit: int) -> Select:
    indexed = [w for w in words if len(w) >= _TRIGRAM]
    # instr() compares exactly: no wildcard characters to escape.
    short = [func.instr(messages.c.content_norm, w) > 0 for w in words if len(w) < _TRIGRAM]
    if not indexed:
        stmt = select(messages).where(*base, *short)
        if before is not None:
            stmt = stmt.where(messages.c.id < before)
        return stmt.order_by(messages.c.id.desc()).limit(limit)
    fts = table(SEARCH_FTS_TABLE, column("rowid", BigInteger))
    match = literal_column(SEARCH_FTS_TABLE).op("MATCH")(" AND ".join(_fts5_phrase(w) for w in indexed))
    # FTS5 yields its matches newest first (ORDER BY rowid DESC) and the join checks the room and the
    # other conditions, so the walk stops after `limit` hits.
    stmt = select(messages).select_from(fts.join(messages, messages.c.id == fts.c.rowid)).where(match, *base, *short)
    if before is not None:
        stmt = stmt.where(fts.c.rowid < before)
    return stmt.order_by(fts.c.rowid.desc()).limit(limit)


def _postgres_search(words: Sequence[str], base: list[ColumnElement[bool]], before: int | None,
                     limit: int) -> Select:
    content = messages.c.content_norm
    conditions = [content.like("%" + escape_like(w) + "%", escape="\\") if len(w) >= _TRIGRAM
                  else func.strpos(content, w) > 0 for w in words]
    stmt = select(messages).where(*base, *conditions)
    if before is not None:
        stmt = stmt.where(messages.c.id < before)
    return stmt.order_by(messages.c.id.desc()).limit(limit)


# ---- user search (instance administration's user list) ----------------------------------------
#
# A part of a username or display name, any case: the same substring machinery as message search. SQLite:
# `users_search`, an FTS5 trigram table over users.username_norm and display_name_norm (external content,
# rowid = user id) kept by triggers, which fire only when a name changes (never on the activity updates).
# PostgreSQL: a GIN trigram index on each column, which `LIKE '%q%'` uses. A part shorter than a trigram
# is a scan on both. A later migration that rebuilds `users` in batch mode must call create_user_search().
#
# Migration 0019, for those short parts:
# - USER_LIST_INDEX: the id and the columns the list filters on, a seventh of the table's size; the scan
#   reads it instead of the rows. Id first, so that walking it backwards yields the newest matches first and the
#   page of a common part stops early.
# - USER_GRAMS_TABLE: for every string of one or two characters, how many accounts have it in their
#   username_norm or display_name_norm; kept by triggers on `users` (an insert, a delete, a change of
#   either name), like the FTS table. The `total` of a short part alone is one row of it instead of a
#   count over every account, and a part no account has needs no scan at all. A row whose count fell to
#   0 stays (a string someone had once). A later migration that rebuilds `users` in batch mode drops the
#   triggers: it must call create_user_grams() again (which also counts every account afresh).

USER_FTS_TABLE = "users_search"
USER_TRIGRAM_INDEXES = ("ix_users_username_norm_trgm", "ix_users_display_name_norm_trgm")
USER_LIST_INDEX = "ix_users_list"
USER_SEARCH_INDEXES = (*USER_TRIGRAM_INDEXES, USER_LIST_INDEX)
USER_GRAMS_TABLE = "user_name_grams"
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
    _execute_in_migration(op, _SQLITE_USER_SEARCH_DDL, _POSTGRES_USER_SEARCH_DDL)


def drop_user_search(op: Any) -> None:
    if op.get_bind().dialect.name == "sqlite":
        for suffix in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS {USER_FTS_TABLE}_{suffix}")
        op.execute(f"DROP TABLE IF EXISTS {USER_FTS_TABLE}")
        return
    for index in USER_TRIGRAM_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {index}")


def create_user_list_index(op: Any) -> None:
    """The narrow index the user list scans (same statement on both databases); tolerates it existing."""
    op.execute(f"CREATE INDEX IF NOT EXISTS {USER_LIST_INDEX} ON users (id, username_norm, display_name_norm, "
               "banned_at)")


def drop_user_list_index(op: Any) -> None:
    op.execute(f"DROP INDEX IF EXISTS {USER_LIST_INDEX}")


def _sqlite_grams(row: str, *, of_every_account: bool = False) -> str:
    """The distinct strings of one and two characters in the two names of `row` (new or old in a trigger),
    or with `of_every_account` (id, string) for every account, `row` being its alias. SQLite's core has
    no generate_series and a trigger may not hold a CTE: the positions in a name are the keys 0..n-1 of a
    JSON array of n zeros, made from the hex of an n-byte zeroblob."""
    account, source = (f"{row}.id, ", f"users AS {row}, ") if of_every_account else ("", "")
    return (
        f"SELECT DISTINCT {account}substr(n.value, p.key + 1, w.value) AS gram "  # noqa: S608 - no outside value
        f"FROM {source}json_each(json_array({row}.username_norm, {row}.display_name_norm)) AS n, "
        "json_each('[' || rtrim(replace(hex(zeroblob(length(n.value))), '00', '0,'), ',') || ']') AS p, "
        "json_each('[1,2]') AS w WHERE p.key + w.value <= length(n.value)"
    )


# USER_GRAMS_TABLE written out.
_SQLITE_USER_GRAMS_DDL = (
    "CREATE TABLE IF NOT EXISTS user_name_grams (gram VARCHAR(2) NOT NULL PRIMARY KEY, users INTEGER NOT NULL) "
    "WITHOUT ROWID",
    "CREATE TRIGGER IF NOT EXISTS user_name_grams_insert AFTER INSERT ON users BEGIN "  # noqa: S608
    f"INSERT INTO user_name_grams (gram, users) SELECT gram, 1 FROM ({_sqlite_grams('new')}) WHERE true "
    "ON CONFLICT (gram) DO UPDATE SET users = users + 1; END",
    # An UPDATE, not an upsert: emptying the tables in any order (tests) must not leave negative rows.
    "CREATE TRIGGER IF NOT EXISTS user_name_grams_delete AFTER DELETE ON users BEGIN "  # noqa: S608
    f"UPDATE user_name_grams SET users = users - 1 WHERE gram IN ({_sqlite_grams('old')}); END",
    "CREATE TRIGGER IF NOT EXISTS user_name_grams_update AFTER UPDATE OF username_norm, display_name_norm "  # noqa: S608
    "ON users WHEN old.username_norm IS NOT new.username_norm OR old.display_name_norm IS NOT new.display_name_norm "
    "BEGIN INSERT INTO user_name_grams (gram, users) SELECT gram, sum(d) FROM ("
    f"SELECT gram, -1 AS d FROM ({_sqlite_grams('old')}) UNION ALL SELECT gram, 1 FROM ({_sqlite_grams('new')})"
    ") GROUP BY gram HAVING sum(d) <> 0 ON CONFLICT (gram) DO UPDATE SET users = users + excluded.users; END",
    # Count the accounts that exist already (and repair a table changed by hand).
    "DELETE FROM user_name_grams",
    "INSERT INTO user_name_grams (gram, users) SELECT gram, count(*) "  # noqa: S608
    f"FROM ({_sqlite_grams('u', of_every_account=True)}) GROUP BY gram",
)
_POSTGRES_USER_GRAMS_DDL = (
    "CREATE TABLE IF NOT EXISTS user_name_grams (gram VARCHAR(2) NOT NULL PRIMARY KEY, users INTEGER NOT NULL)",
    """CREATE OR REPLACE FUNCTION user_name_grams_of(a text, b text) RETURNS SETOF text AS $$
      SELECT DISTINCT substr(s, i, w) FROM unnest(ARRAY[a, b]) AS s, generate_series(1, 2) AS w,
        generate_series(1, length(s) - w + 1) AS i
    $$ LANGUAGE sql IMMUTABLE""",
    # One statement per event, its rows in the order of the strings: two accounts registering (or renamed)
    # at once lock the rows they share in the same order, so one waits for the other and never deadlocks.
    """CREATE OR REPLACE FUNCTION user_name_grams_bump() RETURNS trigger AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO user_name_grams AS g (gram, users)
        SELECT gram, 1 FROM user_name_grams_of(NEW.username_norm, NEW.display_name_norm) AS gram ORDER BY gram
        ON CONFLICT (gram) DO UPDATE SET users = g.users + 1;
      ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO user_name_grams AS g (gram, users)
        SELECT gram, sum(d) FROM (
          SELECT gram, -1 AS d FROM user_name_grams_of(OLD.username_norm, OLD.display_name_norm) AS gram
          UNION ALL
          SELECT gram, 1 FROM user_name_grams_of(NEW.username_norm, NEW.display_name_norm) AS gram
        ) AS delta GROUP BY gram HAVING sum(d) <> 0 ORDER BY gram
        ON CONFLICT (gram) DO UPDATE SET users = g.users + excluded.users;
      ELSE
        UPDATE user_name_grams SET users = users - 1
        WHERE gram IN (SELECT user_name_grams_of(OLD.username_norm, OLD.display_name_norm));
      END IF;
      RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    "CREATE OR REPLACE TRIGGER user_name_grams_insert_delete AFTER INSERT OR DELETE ON users "
    "FOR EACH ROW EXECUTE FUNCTION user_name_grams_bump()",
    "CREATE OR REPLACE TRIGGER user_name_grams_update AFTER UPDATE OF username_norm, display_name_norm ON users "
    "FOR EACH ROW WHEN (OLD.username_norm IS DISTINCT FROM NEW.username_norm "
    "OR OLD.display_name_norm IS DISTINCT FROM NEW.display_name_norm) EXECUTE FUNCTION user_name_grams_bump()",
    "DELETE FROM user_name_grams",
    "INSERT INTO user_name_grams (gram, users) SELECT gram, count(*) FROM users AS u, "
    "user_name_grams_of(u.username_norm, u.display_name_norm) AS gram GROUP BY gram",
)


def create_user_grams(op: Any) -> None:
    """USER_GRAMS_TABLE, its triggers, and its rows for the accounts that exist; tolerates them existing."""
    _execute_in_migration(op, _SQLITE_USER_GRAMS_DDL, _POSTGRES_USER_GRAMS_DDL)


def drop_user_grams(op: Any) -> None:
    if op.get_bind().dialect.name == "sqlite":
        for suffix in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS {USER_GRAMS_TABLE}_{suffix}")
    else:
        for suffix in ("insert_delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS {USER_GRAMS_TABLE}_{suffix} ON users")
        for function in ("bump()", "of(text, text)"):
            op.execute(f"DROP FUNCTION IF EXISTS {USER_GRAMS_TABLE}_{function}")
    op.execute(f"DROP TABLE IF EXISTS {USER_GRAMS_TABLE}")


async def count_users_with_short_part(conn: AsyncConnection, part: str) -> int | None:
    """How many accounts have `part` (already normalised) in either name, from USER_GRAMS_TABLE, when the
    part is one or two characters long; None for any other part (the trigram index counts those)."""
    if not 0 < len(part) < _TRIGRAM:
        return None
    grams = table(USER_GRAMS_TABLE, column("gram", String), column("users", Integer))
    found = (await conn.execute(select(grams.c.users).where(grams.c.gram == part))).scalar_one_or_none()
    return int(found or 0)


async def plan_with_values(conn: AsyncConnection) -> None:
    """PostgreSQL plans the rest of this transaction's statements with their values, never with a cached
    generic plan: for a LIKE pattern the value decides between a trigram index and a scan (a generic plan
    that reads a trigram index with a pattern of under three characters reads all of it)."""
    if not is_sqlite(conn):
        await conn.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))


def user_name_contains(conn: AsyncConnection, part: str) -> ColumnElement[bool]:
    """Users whose username_norm or display_name_norm contains `part` (already normalised), literally."""
    if len(part) >= _TRIGRAM and is_sqlite(conn):
        fts = table(USER_FTS_TABLE, column("rowid", BigInteger))
        match = literal_column(USER_FTS_TABLE).op("MATCH")(_fts5_phrase(part))
        return users.c.id.in_(select(fts.c.rowid).where(match))
    pattern = "%" + escape_like(part) + "%"
    return or_(users.c.username_norm.like(pattern, escape="\\"), users.c.display_name_norm.like(pattern, escape="\\"))


# ---- guild permission versions ----------------------------------------------------------------
#
# `guilds.perm_version` changes whenever anything that decides who may see or do what in a guild
# changes: members (incl. timeouts), held roles, roles, rooms, overrides, the owner, a member's
# instance-administrator flag. Triggers maintain it so that no code path can forget to, and the
# permission cache (realtime/guild_state.py) is valid exactly while the version it read is current.

_GUILD_ID_TABLES = ("members", "member_roles", "roles")
# Rooms matter by existing (their overrides are their own); updates such as `last_message_id` on every
# message must not invalidate the cache.
_ROOM_EVENTS = (("INSERT", "NEW"), ("DELETE", "OLD"))

_SQLITE_PERM_TRIGGERS = [
    *(
        f"CREATE TRIGGER IF NOT EXISTS pv_{table}_{op.lower()} AFTER {op} ON {table} BEGIN "  # noqa: S608
        f"UPDATE guilds SET perm_version = perm_version + 1 WHERE id = {row}.guild_id; END"
        for table in _GUILD_ID_TABLES
        for op, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD"))
    ),
    *(
        f"CREATE TRIGGER IF NOT EXISTS pv_channels_{op.lower()} AFTER {op} ON channels BEGIN "  # noqa: S608
        f"UPDATE guilds SET perm_version = perm_version + 1 WHERE id = {row}.guild_id; END"
        for op, row in _ROOM_EVENTS
    ),
    *(
        f"CREATE TRIGGER IF NOT EXISTS pv_permission_overrides_{op.lower()} AFTER {op} ON permission_overrides "  # noqa: S608
        f"BEGIN UPDATE guilds SET perm_version = perm_version + 1 "
        f"WHERE id = (SELECT guild_id FROM channels WHERE id = {row}.channel_id); END"
        for op, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD"))
    ),
    "CREATE TRIGGER IF NOT EXISTS pv_guilds_owner AFTER UPDATE OF owner_id ON guilds "
    "WHEN NEW.owner_id IS NOT OLD.owner_id BEGIN "
    "UPDATE guilds SET perm_version = perm_version + 1 WHERE id = NEW.id; END",
    "CREATE TRIGGER IF NOT EXISTS pv_users_admin AFTER UPDATE OF is_instance_admin ON users "
    "WHEN NEW.is_instance_admin IS NOT OLD.is_instance_admin BEGIN "
    "UPDATE guilds SET perm_version = perm_version + 1 "
    "WHERE id IN (SELECT guild_id FROM members WHERE user_id = NEW.id); END",
]

_POSTGRES_PERM_TRIGGERS = [
    """CREATE OR REPLACE FUNCTION pv_bump_guild_id() RETURNS trigger AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        UPDATE guilds SET perm_version = perm_version + 1 WHERE id = OLD.guild_id;
      END IF;
      IF TG_OP <> 'DELETE' THEN
        UPDATE guilds SET perm_version = perm_version + 1 WHERE id = NEW.guild_id;
      END IF;
      RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE OR REPLACE FUNCTION pv_bump_override() RETURNS trigger AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        UPDATE guilds SET perm_version = perm_version + 1
        WHERE id = (SELECT guild_id FROM channels WHERE id = OLD.channel_id);
      END IF;
      IF TG_OP <> 'DELETE' THEN
        UPDATE guilds SET perm_version = perm_version + 1
        WHERE id = (SELECT guild_id FROM channels WHERE id = NEW.channel_id);
      END IF;
      RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE OR REPLACE FUNCTION pv_bump_owner() RETURNS trigger AS $$
    BEGIN
      IF NEW.owner_id IS DISTINCT FROM OLD.owner_id THEN
        NEW.perm_version := OLD.perm_version + 1;
      END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql""",
    """CREATE OR REPLACE FUNCTION pv_bump_admin() RETURNS trigger AS $$
    BEGIN
      IF NEW.is_instance_admin IS DISTINCT FROM OLD.is_instance_admin THEN
        UPDATE guilds SET perm_version = perm_version + 1
        WHERE id IN (SELECT guild_id FROM members WHERE user_id = NEW.id);
      END IF;
      RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    *(
        f"CREATE OR REPLACE TRIGGER pv_{table} AFTER INSERT OR UPDATE OR DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION pv_bump_guild_id()"
        for table in _GUILD_ID_TABLES
    ),
    "CREATE OR REPLACE TRIGGER pv_channels AFTER INSERT OR DELETE ON channels "
    "FOR EACH ROW EXECUTE FUNCTION pv_bump_guild_id()",
    "CREATE OR REPLACE TRIGGER pv_permission_overrides AFTER INSERT OR UPDATE OR DELETE ON permission_overrides "
    "FOR EACH ROW EXECUTE FUNCTION pv_bump_override()",
    "CREATE OR REPLACE TRIGGER pv_guilds_owner BEFORE UPDATE OF owner_id ON guilds "
    "FOR EACH ROW EXECUTE FUNCTION pv_bump_owner()",
    "CREATE OR REPLACE TRIGGER pv_users_admin AFTER UPDATE OF is_instance_admin ON users "
    "FOR EACH ROW EXECUTE FUNCTION pv_bump_admin()",
]


def create_perm_version_triggers(op: Any) -> None:
    """Migration helper: the triggers that keep `guilds.perm_version` current (idempotent)."""
    _execute_in_migration(op, _SQLITE_PERM_TRIGGERS, _POSTGRES_PERM_TRIGGERS)


# ---- relationship stamps ------------------------------------------------------------------------
#
# `relationship_stamps.stamp` (db/schema/social.py) takes a value never used before whenever a row of
# `relationships` with that `user_id` is written: random() on SQLite (64 bits), a sequence on PostgreSQL. Never
# a counter: a transaction that changed relationships, kept its friends under its stamp and then rolled back
# must not leave a cache entry that a later commit's stamp could match. Only users that still exist get one (a
# deleted account's rows go by cascade). PostgreSQL stamps once per statement, in user id order, so two
# statements touching the same users take their stamp rows' locks in one order.

_SQLITE_STAMP = ("INSERT INTO relationship_stamps (user_id, stamp) SELECT id, random() FROM users WHERE id = {row}.user_id "
                 "ON CONFLICT (user_id) DO UPDATE SET stamp = excluded.stamp")
_SQLITE_RELATIONSHIP_STAMP_TRIGGERS = [
    f"CREATE TRIGGER IF NOT EXISTS rs_relationships_{op.lower()} AFTER {op} ON relationships BEGIN "
    f"{_SQLITE_STAMP.format(row=row)}; END"
    for op, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD"))
]
_POSTGRES_RELATIONSHIP_STAMP_TRIGGERS = [
    "CREATE SEQUENCE IF NOT EXISTS relationship_stamp_seq",
    """CREATE OR REPLACE FUNCTION rs_stamp() RETURNS trigger AS $$
    BEGIN
      INSERT INTO relationship_stamps (user_id, stamp)
      SELECT u.id, nextval('relationship_stamp_seq')
      FROM users u WHERE u.id IN (SELECT user_id FROM changed)
      ORDER BY u.id
      ON CONFLICT (user_id) DO UPDATE SET stamp = EXCLUDED.stamp;
      RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    *(f"CREATE OR REPLACE TRIGGER rs_relationships_{op.lower()} AFTER {op} ON relationships "
      f"REFERENCING {side} TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION rs_stamp()"
      for op, side in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD"))),
]
# Users with relationships when the stamps arrive get one, so that their friends may be kept at once.
_SQLITE_FIRST_STAMPS = ("INSERT INTO relationship_stamps (user_id, stamp) SELECT user_id, random() "
                        "FROM (SELECT DISTINCT user_id FROM relationships) WHERE true ON CONFLICT (user_id) DO NOTHING")
_POSTGRES_FIRST_STAMPS = ("INSERT INTO relationship_stamps (user_id, stamp) SELECT user_id, nextval('relationship_stamp_seq') "
                          "FROM (SELECT DISTINCT user_id FROM relationships) AS r ON CONFLICT (user_id) DO NOTHING")


def create_relationship_stamp_triggers(op: Any) -> None:
    """Migration helper: the triggers that keep `relationship_stamps` current, and a first stamp for every user
    with relationships (idempotent)."""
    _execute_in_migration(op, [*_SQLITE_RELATIONSHIP_STAMP_TRIGGERS, _SQLITE_FIRST_STAMPS],
                          [*_POSTGRES_RELATIONSHIP_STAMP_TRIGGERS, _POSTGRES_FIRST_STAMPS])


def drop_relationship_stamp_triggers(op: Any) -> None:
    """Migration helper: undo create_relationship_stamp_triggers (the table goes with the migration's downgrade)."""
    sqlite_drops = [f"DROP TRIGGER IF EXISTS rs_relationships_{op_name}" for op_name in ("insert", "update", "delete")]
    postgres_drops = [*(f"DROP TRIGGER IF EXISTS rs_relationships_{op_name} ON relationships"
                        for op_name in ("insert", "update", "delete")),
                      "DROP FUNCTION IF EXISTS rs_stamp()", "DROP SEQUENCE IF EXISTS relationship_stamp_seq"]
    _execute_in_migration(op, sqlite_drops, postgres_drops)


# ---- style counts ----------------------------------------------------------------------------------
#
# `users.style_count` is the number of the user's `user_styles` rows, whatever writes or removes them (a guild's
# deletion removes its styles by cascade). A count, not a flag: increments commute, so concurrent additions and
# removals never leave it wrong. PostgreSQL counts once per statement and takes the users' rows in id order.

_SQLITE_STYLE_COUNT_TRIGGERS = [
    "CREATE TRIGGER IF NOT EXISTS sc_user_styles_insert AFTER INSERT ON user_styles BEGIN "
    "UPDATE users SET style_count = style_count + 1 WHERE id = NEW.user_id; END",
    "CREATE TRIGGER IF NOT EXISTS sc_user_styles_delete AFTER DELETE ON user_styles BEGIN "
    "UPDATE users SET style_count = style_count - 1 WHERE id = OLD.user_id; END",
    "CREATE TRIGGER IF NOT EXISTS sc_user_styles_update AFTER UPDATE OF user_id ON user_styles "
    "WHEN NEW.user_id IS NOT OLD.user_id BEGIN "
    "UPDATE users SET style_count = style_count - 1 WHERE id = OLD.user_id; "
    "UPDATE users SET style_count = style_count + 1 WHERE id = NEW.user_id; END",
]


_POSTGRES_COUNT_FUNCTION = """CREATE OR REPLACE FUNCTION {name}() RETURNS trigger AS $$
    DECLARE r record;
    BEGIN
      FOR r IN SELECT user_id, sum(delta) AS delta FROM ({changes}) AS c GROUP BY user_id ORDER BY user_id LOOP
        UPDATE users SET style_count = style_count + r.delta WHERE id = r.user_id;
      END LOOP;
      RETURN NULL;
    END $$ LANGUAGE plpgsql"""


def _postgres_count_function(name: str, changes: str) -> str:
    """A statement trigger's function adding each user's `delta` from `changes` (rows of user_id, delta)."""
    return _POSTGRES_COUNT_FUNCTION.format(name=name, changes=changes)  # noqa: S608 - this module's fixed text


_POSTGRES_STYLE_COUNT_TRIGGERS = [
    _postgres_count_function("sc_added", "SELECT user_id, 1 AS delta FROM added"),
    _postgres_count_function("sc_removed", "SELECT user_id, -1 AS delta FROM removed"),
    _postgres_count_function("sc_moved", "SELECT user_id, 1 AS delta FROM added "
                                         "UNION ALL SELECT user_id, -1 AS delta FROM removed"),
    "CREATE OR REPLACE TRIGGER sc_user_styles_insert AFTER INSERT ON user_styles "
    "REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION sc_added()",
    "CREATE OR REPLACE TRIGGER sc_user_styles_delete AFTER DELETE ON user_styles "
    "REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION sc_removed()",
    "CREATE OR REPLACE TRIGGER sc_user_styles_update AFTER UPDATE ON user_styles "
    "REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION sc_moved()",
]
_FIRST_STYLE_COUNTS = ("UPDATE users SET style_count = (SELECT count(*) FROM user_styles WHERE user_styles.user_id = users.id) "
                       "WHERE id IN (SELECT user_id FROM user_styles)")


def create_style_count_triggers(op: Any) -> None:
    """Migration helper: the triggers that keep `users.style_count` current, and the counts of the styles already
    there (idempotent)."""
    _execute_in_migration(op, [*_SQLITE_STYLE_COUNT_TRIGGERS, _FIRST_STYLE_COUNTS],
                          [*_POSTGRES_STYLE_COUNT_TRIGGERS, _FIRST_STYLE_COUNTS])


def drop_style_count_triggers(op: Any) -> None:
    """Migration helper: undo create_style_count_triggers (the column goes with the migration's downgrade)."""
    names = ("insert", "delete", "update")
    _execute_in_migration(op, [f"DROP TRIGGER IF EXISTS sc_user_styles_{n}" for n in names],
                          [*(f"DROP TRIGGER IF EXISTS sc_user_styles_{n} ON user_styles" for n in names),
                           *(f"DROP FUNCTION IF EXISTS {f}()" for f in ("sc_added", "sc_removed", "sc_moved"))])


# ---- the session epoch ----------------------------------------------------------------------------
#
# `auth_epoch.value` (one row) rises whenever a session is deleted or its token or step-up changes, and
# whenever an account's ban, deletion or instance-administrator flag changes. Triggers keep it, so that
# no code path (nor a change made directly in the database) can forget to; the session cache
# (auth/sessions.py) trusts an entry only while the epoch it was read under is current. The bump is
# an upsert: a database whose row is missing (emptied tables) reads as epoch 0 and gets it back.

_AUTH_EPOCH_BUMP = ("INSERT INTO auth_epoch (id, value) VALUES (1, 1) "
                    "ON CONFLICT (id) DO UPDATE SET value = auth_epoch.value + 1")
_AUTH_EPOCH_EVENTS = (
    ("sessions_delete", "DELETE ON sessions"),
    ("sessions_update", "UPDATE OF token_hash, prev_token_hash, prev_valid_until, step_up_expires_at, user_id "
                        "ON sessions"),
    ("users_delete", "DELETE ON users"),
    ("users_update", "UPDATE OF is_instance_admin, banned_at, deleted_at ON users"),
)
_SQLITE_AUTH_EPOCH_TRIGGERS = [
    f"CREATE TRIGGER IF NOT EXISTS ae_{name} AFTER {event} FOR EACH ROW BEGIN {_AUTH_EPOCH_BUMP}; END"
    for name, event in _AUTH_EPOCH_EVENTS
]
_POSTGRES_AUTH_EPOCH_TRIGGERS = [
    f"""CREATE OR REPLACE FUNCTION ae_bump() RETURNS trigger AS $$
    BEGIN
      {_AUTH_EPOCH_BUMP};
      RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    # Per row, not per statement: a statement trigger also fires for an update that matched no row (a
    # losing concurrent token rotation), which took the epoch row's lock before the session row's and
    # deadlocked against the winner (session row, then epoch row).
    *(f"CREATE OR REPLACE TRIGGER ae_{name} AFTER {event} FOR EACH ROW EXECUTE FUNCTION ae_bump()"
      for name, event in _AUTH_EPOCH_EVENTS),
]
_READ_AUTH_EPOCH = "SELECT value FROM auth_epoch WHERE id = 1"
# SQLite: one plain connection per engine that does nothing but read the epoch (a few microseconds, where
# a pooled connection through SQLAlchemy costs tens). Autocommit: every read sees the last commit.
_EPOCH_READERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def create_auth_epoch_triggers(op: Any) -> None:
    """Migration helper: the triggers that keep `auth_epoch` current (idempotent)."""
    statements = (_SQLITE_AUTH_EPOCH_TRIGGERS if op.get_bind().dialect.name == "sqlite"
                  else _POSTGRES_AUTH_EPOCH_TRIGGERS)
    for statement in statements:
        op.execute(statement)


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


# ---- message flags and room versions -----------------------------------------------------------------
#
# `messages.reacted` and `messages.has_attachments` turn true when the first reaction or attachment of a
# message is written, whatever writes it, and stay true: a history page then asks for reactions and files
# only of the messages that may have some. Clearing them when the last one goes would race on PostgreSQL
# (a removal's EXISTS cannot see a concurrent, uncommitted addition); a stale true costs one empty query.
#
# `channels.message_version` rises with every insert, update and delete of the room's messages (the flags
# above included), in the writing transaction: cached history pages (messages/page_cache.py) are valid
# exactly while it is unchanged, on every node. The insert trigger also keeps `last_message_id` (the
# newest non-private message) and `has_private`. Writers that lock the room row do so before any message
# row (messages/queries.lock_channel), so these updates never take the two locks in the other order.

_FLAG_SOURCES = (
    # (trigger name, event, flag column, message id of the new row)
    ("mf_reactions_insert", "INSERT ON reactions", "reacted", "NEW.message_id"),
    ("mf_files_insert", "INSERT ON files", "has_attachments", "NEW.message_id"),
    ("mf_files_bind", "UPDATE OF message_id ON files", "has_attachments", "NEW.message_id"),
)


def _flag_update(column: str, message_id: str) -> str:
    # Only a row still false is written, so flagged messages are not rewritten by every reaction.
    return f"UPDATE messages SET {column} = true WHERE id = {message_id} AND NOT {column}"  # noqa: S608


_ROOM_VERSION_BUMP = "UPDATE channels SET message_version = message_version + 1"
_ROOM_ON_INSERT = (
    f"{_ROOM_VERSION_BUMP}, "
    "has_private = CASE WHEN NEW.kind = 'private' THEN true ELSE has_private END, "
    "last_message_id = CASE WHEN NEW.kind <> 'private' AND (last_message_id IS NULL OR NEW.id > last_message_id) "
    "THEN NEW.id ELSE last_message_id END "
    "WHERE id = NEW.channel_id"
)
_ROOM_VERSION_SOURCES = (
    ("mv_messages_insert", "INSERT", _ROOM_ON_INSERT),
    ("mv_messages_update", "UPDATE", f"{_ROOM_VERSION_BUMP} WHERE id = NEW.channel_id"),
    ("mv_messages_delete", "DELETE", f"{_ROOM_VERSION_BUMP} WHERE id = OLD.channel_id"),
)

_SQLITE_FLAG_TRIGGERS = [
    *(f"CREATE TRIGGER IF NOT EXISTS {name} AFTER {event} FOR EACH ROW WHEN NEW.message_id IS NOT NULL "
      f"BEGIN {_flag_update(column, row)}; END"
      for name, event, column, row in _FLAG_SOURCES),
    *(f"CREATE TRIGGER IF NOT EXISTS {name} AFTER {op} ON messages FOR EACH ROW BEGIN {statement}; END"
      for name, op, statement in _ROOM_VERSION_SOURCES),
]
_POSTGRES_FLAG_TRIGGERS = [
    *(f"""CREATE OR REPLACE FUNCTION {name}() RETURNS trigger AS $$
    BEGIN
      {_flag_update(column, row)};
      RETURN NULL;
    END $$ LANGUAGE plpgsql""" for name, _event, column, row in _FLAG_SOURCES),
    *(f"CREATE OR REPLACE TRIGGER {name} AFTER {event} FOR EACH ROW WHEN (NEW.message_id IS NOT NULL) "
      f"EXECUTE FUNCTION {name}()"
      for name, event, _column, _row in _FLAG_SOURCES),
    *(f"""CREATE OR REPLACE FUNCTION {name}() RETURNS trigger AS $$
    BEGIN
      {statement};
      RETURN NULL;
    END $$ LANGUAGE plpgsql""" for name, _op, statement in _ROOM_VERSION_SOURCES),
    *(f"CREATE OR REPLACE TRIGGER {name} AFTER {op} ON messages FOR EACH ROW EXECUTE FUNCTION {name}()"
      for name, op, _statement in _ROOM_VERSION_SOURCES),
]


def create_message_flag_triggers(op: Any) -> None:
    """Migration helper: the triggers that set the message flags and room versions (idempotent)."""
    _execute_in_migration(op, _SQLITE_FLAG_TRIGGERS, _POSTGRES_FLAG_TRIGGERS)


# ---- room days (instance statistics) -------------------------------------------------------------------
#
# `room_days` (db/schema/stats.py) counts the messages of each room per UTC day of their id, so that the
# instance statistics sum a few thousand rows instead of counting every message. Triggers on `messages` keep
# it exact whatever writes or deletes a message: an insert adds 1 (an upsert), a delete takes 1 away, and a
# change of a message's room or id (nothing does that today) moves it. Deleting a room (and so a server or
# a conversation) deletes its messages by cascade, which fires the delete trigger, and its room_days rows by
# their own cascade: in whichever order the two run, nothing is left. The delete trigger is an UPDATE, never
# an upsert, so that it cannot recreate a row of a room being deleted (or of a table emptied in any order).
#
# Lock order on PostgreSQL: AFTER triggers of one event fire in the order of their names, so the room row
# (mv_messages_*, "message flags and room versions") is always locked before its room_days row; two writers
# of one room queue on the room row first and never take the two in the other order.

ROOM_DAY_MS = 86_400_000
# The UTC day (days since 1970-01-01) of a message id; admin/stats computes the same from a date.
_ROOM_DAY_OF = f"((({{row}}.id >> 22) + {EPOCH_MS}) / {ROOM_DAY_MS})"


def _room_day(row: str) -> str:
    return _ROOM_DAY_OF.format(row=row)


def _room_day_add(row: str) -> str:
    return (f"INSERT INTO room_days (channel_id, day, messages) VALUES ({row}.channel_id, {_room_day(row)}, 1) "  # noqa: S608
            "ON CONFLICT (channel_id, day) DO UPDATE SET messages = room_days.messages + 1")


def _room_day_take(row: str) -> str:
    return (f"UPDATE room_days SET messages = messages - 1 "  # noqa: S608 - no outside value
            f"WHERE channel_id = {row}.channel_id AND day = {_room_day(row)}")


_ROOM_DAYS_MOVED = "OLD.channel_id <> NEW.channel_id OR OLD.id <> NEW.id"
_ROOM_DAYS_BACKFILL = (
    "DELETE FROM room_days",
    # Every message counted afresh (also repairs a table changed by hand).
    f"INSERT INTO room_days (channel_id, day, messages) SELECT m.channel_id, {_room_day('m')} AS d, count(*) "  # noqa: S608
    "FROM messages AS m GROUP BY m.channel_id, d",
)
_SQLITE_ROOM_DAYS_DDL = (
    f"CREATE TRIGGER IF NOT EXISTS room_days_insert AFTER INSERT ON messages BEGIN {_room_day_add('NEW')}; END",
    f"CREATE TRIGGER IF NOT EXISTS room_days_delete AFTER DELETE ON messages BEGIN {_room_day_take('OLD')}; END",
    f"CREATE TRIGGER IF NOT EXISTS room_days_update AFTER UPDATE OF channel_id, id ON messages "
    f"WHEN {_ROOM_DAYS_MOVED} BEGIN {_room_day_take('OLD')}; {_room_day_add('NEW')}; END",
    *_ROOM_DAYS_BACKFILL,
)
_POSTGRES_ROOM_DAYS_DDL = (
    f"""CREATE OR REPLACE FUNCTION room_days_bump() RETURNS trigger AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        {_room_day_take('OLD')};
      END IF;
      IF TG_OP <> 'DELETE' THEN
        {_room_day_add('NEW')};
      END IF;
      RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    "CREATE OR REPLACE TRIGGER room_days_insert_delete AFTER INSERT OR DELETE ON messages "
    "FOR EACH ROW EXECUTE FUNCTION room_days_bump()",
    "CREATE OR REPLACE TRIGGER room_days_update AFTER UPDATE OF channel_id, id ON messages "
    f"FOR EACH ROW WHEN ({_ROOM_DAYS_MOVED}) EXECUTE FUNCTION room_days_bump()",
    *_ROOM_DAYS_BACKFILL,
)


def create_room_days_triggers(op: Any) -> None:
    """Migration helper: the triggers that keep `room_days` exact, then its rows counted from the messages
    that exist (idempotent)."""
    _execute_in_migration(op, _SQLITE_ROOM_DAYS_DDL, _POSTGRES_ROOM_DAYS_DDL)


def drop_room_days_triggers(op: Any) -> None:
    if op.get_bind().dialect.name == "sqlite":
        for suffix in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS room_days_{suffix}")
        return
    for suffix in ("insert_delete", "update"):
        op.execute(f"DROP TRIGGER IF EXISTS room_days_{suffix} ON messages")
    op.execute("DROP FUNCTION IF EXISTS room_days_bump()")

"""The objects of revision 0019_user_search_short_parts: the narrow index the user list scans, and the
table of one- and two-character strings with its triggers (meadhall/db/dialect/search.py, "user search").

Frozen (meadhall/db/migrations/frozen/__init__.py): never edited once shipped."""

from __future__ import annotations

from typing import Any

from meadhall.db.migrations.frozen import run_for_database

USER_LIST_INDEX = "ix_users_list"
USER_GRAMS_TABLE = "user_name_grams"


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
    run_for_database(op, _SQLITE_USER_GRAMS_DDL, _POSTGRES_USER_GRAMS_DDL)


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

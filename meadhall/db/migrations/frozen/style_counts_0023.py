"""The triggers of revision 0023_user_style_count that keep `users.style_count` current.

Frozen (meadhall/db/migrations/frozen/__init__.py): never edited once shipped."""

from __future__ import annotations

from typing import Any

from meadhall.db.migrations.frozen import run_for_database

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
    run_for_database(op, [*_SQLITE_STYLE_COUNT_TRIGGERS, _FIRST_STYLE_COUNTS],
                          [*_POSTGRES_STYLE_COUNT_TRIGGERS, _FIRST_STYLE_COUNTS])


def drop_style_count_triggers(op: Any) -> None:
    """Migration helper: undo create_style_count_triggers (the column goes with the migration's downgrade)."""
    names = ("insert", "delete", "update")
    run_for_database(op, [f"DROP TRIGGER IF EXISTS sc_user_styles_{n}" for n in names],
                          [*(f"DROP TRIGGER IF EXISTS sc_user_styles_{n} ON user_styles" for n in names),
                           *(f"DROP FUNCTION IF EXISTS {f}()" for f in ("sc_added", "sc_removed", "sc_moved"))])

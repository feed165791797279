"""The triggers of revision 0022_relationship_stamps that keep `relationship_stamps` current.

Frozen (meadhall/db/migrations/frozen/__init__.py): never edited once shipped."""

from __future__ import annotations

from typing import Any

from meadhall.db.migrations.frozen import run_for_database

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
    run_for_database(op, [*_SQLITE_RELATIONSHIP_STAMP_TRIGGERS, _SQLITE_FIRST_STAMPS],
                          [*_POSTGRES_RELATIONSHIP_STAMP_TRIGGERS, _POSTGRES_FIRST_STAMPS])


def drop_relationship_stamp_triggers(op: Any) -> None:
    """Migration helper: undo create_relationship_stamp_triggers (the table goes with the migration's downgrade)."""
    sqlite_drops = [f"DROP TRIGGER IF EXISTS rs_relationships_{op_name}" for op_name in ("insert", "update", "delete")]
    postgres_drops = [*(f"DROP TRIGGER IF EXISTS rs_relationships_{op_name} ON relationships"
                        for op_name in ("insert", "update", "delete")),
                      "DROP FUNCTION IF EXISTS rs_stamp()", "DROP SEQUENCE IF EXISTS relationship_stamp_seq"]
    run_for_database(op, sqlite_drops, postgres_drops)

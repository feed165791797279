"""The triggers of revision 0020_room_days that keep `room_days` exact.

Frozen (meadhall/db/migrations/frozen/__init__.py): never edited once shipped."""

from __future__ import annotations

from typing import Any

from meadhall.db.migrations.frozen import run_for_database

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

_ROOM_DAY_MS = 86_400_000
# The epoch of message ids (meadhall/core/ids.py EPOCH_MS, 2024-01-01T00:00:00Z), written out: ids keep it.
_ID_EPOCH_MS = 1_704_067_200_000
# The UTC day (days since 1970-01-01) of a message id; admin/stats computes the same from a date.
_ROOM_DAY_OF = f"((({{row}}.id >> 22) + {_ID_EPOCH_MS}) / {_ROOM_DAY_MS})"


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
    run_for_database(op, _SQLITE_ROOM_DAYS_DDL, _POSTGRES_ROOM_DAYS_DDL)


def drop_room_days_triggers(op: Any) -> None:
    if op.get_bind().dialect.name == "sqlite":
        for suffix in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS room_days_{suffix}")
        return
    for suffix in ("insert_delete", "update"):
        op.execute(f"DROP TRIGGER IF EXISTS room_days_{suffix} ON messages")
    op.execute("DROP FUNCTION IF EXISTS room_days_bump()")

"""The triggers of revision 0010_message_flags: message flags and room versions.

Frozen (meadhall/db/migrations/frozen/__init__.py): never edited once shipped."""

from __future__ import annotations

from typing import Any

from meadhall.db.migrations.frozen import run_for_database

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
    run_for_database(op, _SQLITE_FLAG_TRIGGERS, _POSTGRES_FLAG_TRIGGERS)

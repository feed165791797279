"""The triggers of revision 0007_guild_perm_version that keep `guilds.perm_version` current.

Frozen (meadhall/db/migrations/frozen/__init__.py): never edited once shipped."""

from __future__ import annotations

from typing import Any

from meadhall.db.migrations.frozen import run_for_database

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
    run_for_database(op, _SQLITE_PERM_TRIGGERS, _POSTGRES_PERM_TRIGGERS)

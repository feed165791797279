"""The triggers of revision 0009_auth_epoch that keep `auth_epoch` current (read by
meadhall/db/dialect/auth_epoch.py).

Frozen (meadhall/db/migrations/frozen/__init__.py): never edited once shipped."""

from __future__ import annotations

from typing import Any

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


def create_auth_epoch_triggers(op: Any) -> None:
    """Migration helper: the triggers that keep `auth_epoch` current (idempotent)."""
    statements = (_SQLITE_AUTH_EPOCH_TRIGGERS if op.get_bind().dialect.name == "sqlite"
                  else _POSTGRES_AUTH_EPOCH_TRIGGERS)
    for statement in statements:
        op.execute(statement)

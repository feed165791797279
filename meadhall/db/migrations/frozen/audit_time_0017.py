"""How revision 0017 (the audit chain) writes a timestamp into the hash of each existing audit row, frozen as
it shipped: the rule lives in meadhall/core/clock.py for the service, which may change; the hashes 0017 wrote
may not (docs/audit.md)."""

from __future__ import annotations

from datetime import UTC, datetime


def wire_time(value: datetime | None) -> str | None:
    """UTC with millisecond precision and `Z`; a naive value (SQLite) is UTC by construction."""
    if value is None:
        return None
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value.isoformat(timespec="milliseconds")[:23] + "Z"

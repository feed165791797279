"""Serialise a session row into the API's session object (OpenAPI: listSessions)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from meadhall.auth.queries import SessionRow
from meadhall.core.clock import as_utc, iso


def session_view(row: SessionRow, ttl: timedelta, current_id: int | None) -> dict[str, Any]:
    last_used = as_utc(row["last_used_at"])
    assert last_used is not None
    return {
        "id": str(row["id"]),
        "created_at": iso(row["created_at"]),
        "last_used_at": iso(last_used),
        "expires_at": iso(last_used + ttl),
        "ip": row["ip"],
        "user_agent": row["user_agent"],
        "method": row["method"],
        "current": row["id"] == current_id,
        "step_up_expires_at": iso(row["step_up_expires_at"]),
    }

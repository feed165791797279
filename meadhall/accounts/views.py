"""Serialise account rows into the API objects of API.md 2.1, 2.2, 2.4 and 2.6."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import RowMapping

from meadhall.core.clock import as_utc, iso
from meadhall.core.crypto import Keys, decrypt

PRESENCE_TIMEOUT = timedelta(minutes=2)


def badges(row: RowMapping) -> list[str]:
    return ["instance_admin"] if row["is_instance_admin"] else []


def email_of(row: RowMapping, keys: Keys) -> str:
    return decrypt(keys.email_enc, row["email_enc"], aad=str(row["id"]).encode())


def effective_status(row: RowMapping, now: datetime) -> str:
    """What others see: `invisible` and more than 2 minutes without activity read as offline."""
    last_seen = as_utc(row["last_seen_at"])
    if row["status"] == "invisible" or last_seen is None or now - last_seen > PRESENCE_TIMEOUT:
        return "offline"
    return str(row["status"])


def user_private(row: RowMapping, keys: Keys) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "username": row["username"],
        "email": email_of(row, keys),
        "display_name": row["display_name"],
        "bio": row["bio"],
        "status": row["status"],
        "custom_status": row["custom_status"],
        "custom_status_emoji": row["custom_status_emoji"],
        "locale": row["locale"],
        "timezone": row["timezone"],
        "totp_enabled": bool(row["totp_enabled"]),
        "onboarding_completed_at": iso(row["onboarding_completed_at"]),
        "is_instance_admin": bool(row["is_instance_admin"]),
        "badges": badges(row),
        "avatar": str(row["avatar_file_id"]) if row["avatar_file_id"] else None,
        "last_seen_at": iso(row["last_seen_at"]),
        "password_reset_required": bool(row["password_reset_required"]),
        "created_at": iso(row["created_at"]),
    }


def user_summary(row: RowMapping, now: datetime) -> dict[str, Any]:
    if row["deleted_at"] is not None:
        return {
            "id": str(row["id"]),
            "username": f"deleted-{row['id']}",
            "display_name": "Deleted user",
            "avatar": None,
            "bio": "",
            "status": "offline",
            "custom_status": None,
            "custom_status_emoji": None,
            "badges": [],
            "created_at": iso(row["created_at"]),
            "deleted": True,
        }
    status = effective_status(row, now)
    offline = status == "offline"
    return {
        "id": str(row["id"]),
        "username": row["username"],
        "display_name": row["display_name"],
        "avatar": str(row["avatar_file_id"]) if row["avatar_file_id"] else None,
        "bio": row["bio"],
        "status": status,
        "custom_status": None if offline else row["custom_status"],
        "custom_status_emoji": None if offline else row["custom_status_emoji"],
        "badges": badges(row),
        "created_at": iso(row["created_at"]),
        "deleted": False,
    }


def session_view(row: RowMapping, ttl: timedelta, current_id: int | None) -> dict[str, Any]:
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


def security_event_view(row: RowMapping) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "user_id": str(row["user_id"]) if row["user_id"] is not None else None,
        "type": row["type"],
        "ip": row["ip"],
        "user_agent": row["user_agent"],
        "data": row["data"] or {},
        "created_at": iso(row["created_at"]),
    }

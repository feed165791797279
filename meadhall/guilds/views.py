"""Serialise guild rows into the API objects of API.md 2.7-2.14."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping

from meadhall.accounts.views import user_summary
from meadhall.core import permissions as perms
from meadhall.core.clock import as_utc, iso


def sid(value: int | None) -> str | None:
    return None if value is None else str(value)


def guild_view(row: RowMapping) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "name": row["name"],
        "description": row["description"],
        "icon_file_id": sid(row["icon_file_id"]),
        "banner_file_id": sid(row["banner_file_id"]),
        "splash_file_id": sid(row["splash_file_id"]),
        "owner_id": str(row["owner_id"]),
        "member_count": int(row["member_count"]),
        "system_channel_id": sid(row["system_channel_id"]),
        "public": bool(row["public"]),
        "public_invite_code": row["public_invite_code"],
        "is_main": bool(row["is_main"]),
        "created_at": iso(row["created_at"]),
    }


def role_view(row: RowMapping) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "guild_id": str(row["guild_id"]),
        "name": row["name"],
        "color": int(row["color"]),
        "position": int(row["position"]),
        "permissions": perms.to_string(int(row["permissions"])),
        "hoist": bool(row["hoist"]),
        "frame_id": sid(row["frame_id"]),
        "icon_id": sid(row["icon_id"]),
        "is_default": bool(row["is_default"]),
    }


def override_view(row: RowMapping) -> dict[str, Any]:
    return {
        "id": str(row["target_id"]),
        "type": row["kind"],
        "allow": perms.to_string(int(row["allow"])),
        "deny": perms.to_string(int(row["deny"])),
    }


def channel_view(row: RowMapping, overrides: list[RowMapping]) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "type": row["type"],
        "guild_id": sid(row["guild_id"]),
        "name": row["name"],
        "topic": row["topic"],
        "position": int(row["position"]),
        "parent_id": sid(row["parent_id"]),
        "slowmode_seconds": int(row["slowmode_seconds"]),
        "user_limit": row["user_limit"],
        "background_file_id": sid(row["background_file_id"]),
        "icon_file_id": None,
        "dm_owner_id": None,
        "permission_overrides": [override_view(o) for o in overrides],
        "last_message_id": sid(row["last_message_id"]),
        "created_at": iso(row["created_at"]),
    }


def member_view(member: RowMapping, user: RowMapping | dict[str, Any], role_ids: list[int], now: datetime
                ) -> dict[str, Any]:
    until = as_utc(member["timeout_until"])
    return {
        "guild_id": str(member["guild_id"]),
        "user": user_summary(user, now),  # type: ignore[arg-type]
        "nick": member["nick"],
        "roles": [str(r) for r in sorted(role_ids)],
        "joined_at": iso(member["joined_at"]),
        "timeout_until": iso(until) if until is not None and until > now else None,
        "style": None,
    }

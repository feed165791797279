"""Serialise room rows into the Channel object (OpenAPI: getChannel)."""

from __future__ import annotations

from typing import Any

from meadhall.accounts.views import iso_recalled
from meadhall.core import permissions as perms
from meadhall.core.ids import sid
from meadhall.guilds.rows import ChannelRow, OverrideRow


def override_view(row: OverrideRow) -> dict[str, Any]:
    return {
        "id": str(row["target_id"]),
        "type": row["kind"],
        "allow": perms.to_string(int(row["allow"])),
        "deny": perms.to_string(int(row["deny"])),
    }


def channel_view(row: ChannelRow, overrides: list[OverrideRow]) -> dict[str, Any]:
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
        # Remembered (a pure function): READY shows every room of the user's guilds, each time.
        "created_at": iso_recalled(row["created_at"]),
    }

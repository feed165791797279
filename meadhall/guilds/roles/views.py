"""Serialise role rows into the Role object (OpenAPI: getRole)."""

from __future__ import annotations

from typing import Any

from meadhall.core import permissions as perms
from meadhall.core.ids import sid
from meadhall.guilds.rows import RoleRow


def role_view(row: RoleRow) -> dict[str, Any]:
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

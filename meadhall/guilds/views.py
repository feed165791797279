"""Serialise guild rows into the Guild object (OpenAPI: getGuild)."""

from __future__ import annotations

from typing import Any

from meadhall.accounts.views import iso_recalled
from meadhall.core.ids import sid
from meadhall.guilds.rows import GuildRow


def guild_view(row: GuildRow) -> dict[str, Any]:
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
        # Remembered (a pure function): READY shows every guild of the user, each time.
        "created_at": iso_recalled(row["created_at"]),
    }

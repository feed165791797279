"""Serialise emoji rows into the Emoji object (OpenAPI: listEmojis)."""

from __future__ import annotations

from typing import Any

from meadhall.core.clock import iso
from meadhall.core.ids import sid
from meadhall.guilds.emojis.queries import EmojiRow


def emoji_view(row: EmojiRow) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "guild_id": str(row["guild_id"]),
        "name": row["name"],
        "file_id": str(row["file_id"]),
        "token": f"<:{row['name']}:{row['id']}>",
        "animated": bool(row["animated"]),
        "creator_id": sid(row["creator_id"]),
        "created_at": iso(row["created_at"]),
    }

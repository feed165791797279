"""Serialise sound rows into the Sound object (OpenAPI: listSounds)."""

from __future__ import annotations

from typing import Any

from meadhall.core.clock import iso
from meadhall.core.ids import sid
from meadhall.guilds.sounds.queries import SoundRow


def sound_view(row: SoundRow) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "guild_id": str(row["guild_id"]),
        "name": row["name"],
        "emoji": row["emoji"],
        "kind": row["kind"],
        "palette_event": row["palette_event"],
        "file_id": str(row["file_id"]),
        "duration_ms": row["duration_ms"],
        "creator_id": sid(row["creator_id"]),
        "created_at": iso(row["created_at"]),
    }

"""Serialise gallery rows into the Cosmetic object (OpenAPI: listCosmetics)."""

from __future__ import annotations

from typing import Any

from meadhall.core.clock import iso
from meadhall.guilds.cosmetics.queries import CosmeticRow


def cosmetic_view(row: CosmeticRow) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "guild_id": str(row["guild_id"]),
        "kind": row["kind"],
        "name": row["name"],
        "file_id": str(row["file_id"]),
        "created_at": iso(row["created_at"]),
    }

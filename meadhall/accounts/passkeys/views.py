"""Serialise a passkey row into the API's Passkey object (OpenAPI: listPasskeys)."""

from __future__ import annotations

from typing import Any

from meadhall.accounts.passkeys.queries import PasskeyRow
from meadhall.core.clock import iso


def passkey_view(row: PasskeyRow) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "name": row["name"],
        "created_at": iso(row["created_at"]),
        "last_used_at": iso(row["last_used_at"]),
        "backed_up": bool(row["backed_up"]),
    }

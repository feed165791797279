"""Serialise audit rows into the API's audit entry (OpenAPI: listAuditLog). The actor's UserSummary is built by the caller
(the accounts domain owns that shape), so this layer stays below the domains."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from meadhall.audit.queries import AuditEntryRow
from meadhall.core.clock import iso
from meadhall.core.ids import sid


def audit_entry_view(row: AuditEntryRow, actor: Mapping[str, Any] | None) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "action": row["action"],
        "guild_id": sid(row["guild_id"]),
        "actor_id": sid(row["actor_id"]),
        "actor": actor,
        "target_type": row["target_type"],
        "target_id": sid(row["target_id"]),
        "reason": row["reason"],
        "data": row["data"] or {},
        "created_at": iso(row["created_at"]),
    }

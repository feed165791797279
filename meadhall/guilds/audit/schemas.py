"""Response models of the guild audit log (OpenAPI: listAuditLog)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from meadhall.accounts.schemas import UserSummary


class AuditEntry(BaseModel):
    id: str
    action: str
    guild_id: str | None
    actor_id: str | None
    actor: UserSummary | None
    target_type: str | None
    target_id: str | None
    reason: str | None
    data: dict[str, Any]
    created_at: str


class AuditEntriesResponse(BaseModel):
    audit_entries: list[AuditEntry]
    has_more: bool

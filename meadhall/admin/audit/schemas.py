"""Response models of the instance audit log (OpenAPI: listInstanceAuditLog, listInstanceAuditLogActions,
exportInstanceAuditLog). The entry is the guild audit log's: one audit store."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from meadhall.guilds.audit.schemas import AuditEntry


class InstanceAuditEntriesResponse(BaseModel):
    audit_entries: list[AuditEntry]
    total: int
    has_more: bool


class AuditActionsResponse(BaseModel):
    actions: list[str]


CSV_DESCRIPTION = (
    "The filtered log as CSV (RFC 4180, CRLF line ends), newest first, at most 100,000 entries. Columns "
    "`id,created_at,action,actor_id,actor_username,target_type,target_id,guild_id,reason,data`; `data` is "
    "compact JSON. A cell starting with `=`, `+`, `-` or `@` is prefixed with `'` so spreadsheets do not "
    "run it. The last line is `# sha256=<hex>`: the SHA-256 of every byte before that line "
    "(docs/audit.md)."
)
CSV_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": CSV_DESCRIPTION,
          "content": {"text/csv": {"schema": {"type": "string"}}},
          "headers": {"Content-Disposition": {
              "description": 'attachment; filename="audit-YYYYMMDD-HHMMSS.csv" (UTC time of the export)',
              "schema": {"type": "string"}}}},
}

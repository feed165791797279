"""The instance audit log (OpenAPI: listInstanceAuditLog, listInstanceAuditLogActions,
exportInstanceAuditLog): every entry of the one audit store, for instance administrators only."""

from __future__ import annotations

from typing import Any

from meadhall.accounts.queries import SUMMARY_COLUMNS
from meadhall.accounts.views import user_summary
from meadhall.admin.access import require_admin
from meadhall.admin.audit.export import AuditExport, export_of
from meadhall.audit.actions import AUDIT_ACTIONS
from meadhall.audit.queries import AuditFilters, count_audit_entries, select_audit_page
from meadhall.audit.views import audit_entry_view
from meadhall.auth.sessions import Principal
from meadhall.runtime import Runtime

# A time window with at most this many entries is read through the created_at index and sorted (cheap at
# this size); a larger one is dense enough to walk the primary key from the newest entry.
SPARSE_MAX = 10_000


async def access_instance_audit_log(rt: Runtime, principal: Principal, filters: AuditFilters, limit: int
                                    ) -> dict[str, Any]:
    require_admin(principal)
    async with rt.read() as uow:
        total = await count_audit_entries(uow.conn, filters)
        windowed = filters.created_from is not None or filters.created_to is not None
        rows, has_more = await select_audit_page(uow.conn, filters, limit, actor_columns=SUMMARY_COLUMNS,
                                                 sparse=windowed and total <= SPARSE_MAX)
    entries = [
        audit_entry_view(row.entry, None if row.actor is None else user_summary(row.actor, uow.now)) for row in rows
    ]
    return {"audit_entries": entries, "total": total, "has_more": has_more}


def access_audit_actions(principal: Principal) -> dict[str, Any]:
    require_admin(principal)
    return {"actions": list(AUDIT_ACTIONS)}


def check_audit_export(rt: Runtime, principal: Principal, filters: AuditFilters) -> AuditExport:
    """Authorise now, before the first byte: the rows are read while the response streams."""
    require_admin(principal)
    return export_of(rt, filters, rt.clock.now())

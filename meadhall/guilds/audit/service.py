"""The guild audit log (OpenAPI: listAuditLog): VIEW_AUDIT_LOG, newest first."""

from __future__ import annotations

from typing import Any

from meadhall.accounts.queries import SUMMARY_COLUMNS
from meadhall.accounts.views import user_summary
from meadhall.audit.queries import AuditFilters, select_audit_page
from meadhall.audit.views import audit_entry_view
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.guilds.access import access_guild, require
from meadhall.runtime import Runtime


async def access_guild_audit_log(rt: Runtime, principal: Principal, raw_guild_id: str, *, action: str | None,
                          actor_id: int | None, target_id: int | None, before_id: int | None, limit: int
                          ) -> dict[str, Any]:
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, perms.P.VIEW_AUDIT_LOG)
        filters = AuditFilters(guild_id=gc.guild_id, action=action, actor_id=actor_id, target_id=target_id,
                               before_id=before_id)
        rows, has_more = await select_audit_page(uow.conn, filters, limit, actor_columns=SUMMARY_COLUMNS)
    entries = [
        audit_entry_view(row.entry, None if row.actor is None else user_summary(row.actor, uow.now)) for row in rows
    ]
    return {"audit_entries": entries, "has_more": has_more}

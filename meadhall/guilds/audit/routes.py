"""Route of the guild audit log: `GET /guilds/{guild_id}/audit-logs`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import AfterValidator

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import ID_SCHEMA, errors
from meadhall.api.pagination import query_id
from meadhall.auth.deps import PrincipalDep
from meadhall.core.limits import PAGE_DEFAULT, PAGE_MAX
from meadhall.core.text import check_single_line
from meadhall.guilds.audit import service as audit_service
from meadhall.guilds.audit.schemas import AuditEntriesResponse

audit = APIRouter(tags=["guilds"])


@dataclass(frozen=True)
class AuditQuery:
    action: str | None
    actor_id: int | None
    target_id: int | None
    before_id: int | None
    limit: int


def audit_query(
    action: Annotated[str | None, Query(max_length=64, description="Only this action (Appendix A)"),
                      AfterValidator(check_single_line)] = None,
    actor_id: Annotated[str | None, Query(description="Only entries by this user", json_schema_extra=ID_SCHEMA)] = None,
    target_id: Annotated[str | None, Query(description="Only entries about this target", json_schema_extra=ID_SCHEMA)] = None,
    before_id: Annotated[str | None, Query(description="Entries older than this entry id", json_schema_extra=ID_SCHEMA)] = None,
    limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT,
) -> AuditQuery:
    return AuditQuery(action, query_id("actor_id", actor_id), query_id("target_id", target_id),
                      query_id("before_id", before_id), limit)


@audit.get("/guilds/{guild_id}/audit-logs", operation_id="listAuditLog", response_model=AuditEntriesResponse,
           responses=errors("guild.not_found", "perm.denied"))
async def guild_audit_log(rt: RuntimeDep, guild_id: str, principal: PrincipalDep,
                          q: Annotated[AuditQuery, Depends(audit_query)]) -> dict:
    return await audit_service.access_guild_audit_log(rt, principal, guild_id, action=q.action,
                                           actor_id=q.actor_id, target_id=q.target_id, before_id=q.before_id,
                                           limit=q.limit)

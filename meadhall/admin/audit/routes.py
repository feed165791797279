"""Routes of instance administration: the audit log, its actions and its CSV export (docs/audit.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response, StreamingResponse

from meadhall.admin.audit import service
from meadhall.admin.audit.params import (
    TIME_RULES,
    ActionQuery,
    ActorQuery,
    FromQuery,
    GuildQuery,
    TargetQuery,
    ToQuery,
    audit_filters,
)
from meadhall.admin.audit.schemas import CSV_RESPONSES, AuditActionsResponse, InstanceAuditEntriesResponse
from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import ID_SCHEMA, errors
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.core.limits import PAGE_DEFAULT, PAGE_MAX

router = APIRouter(tags=["instance"])


@router.get("/instance/audit-logs", operation_id="listInstanceAuditLog", response_model=InstanceAuditEntriesResponse,
            responses=errors("perm.denied"), openapi_extra=TIME_RULES)
async def list_instance_audit_log(
    rt: RuntimeDep, principal: PrincipalDep, action: ActionQuery = None, actor_id: ActorQuery = None,
    target_id: TargetQuery = None, guild_id: GuildQuery = None, created_from: FromQuery = None,
    created_to: ToQuery = None,
    before_id: Annotated[str | None, Query(description="Entries older than this entry id",
                                           json_schema_extra=ID_SCHEMA)] = None,
    limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT,
) -> dict:
    filters = audit_filters(action, actor_id, target_id, guild_id, created_from, created_to, before_id)
    return await service.access_instance_audit_log(rt, principal, filters, limit)


@router.get("/instance/audit-logs/actions", operation_id="listInstanceAuditLogActions",
            response_model=AuditActionsResponse, responses=errors("perm.denied"))
async def list_instance_audit_log_actions(principal: PrincipalDep) -> dict:
    return service.access_audit_actions(principal)


@router.get("/instance/audit-logs/export", operation_id="exportInstanceAuditLog", response_class=Response,
            dependencies=[limited("instance.audit_export")],
            responses={**CSV_RESPONSES, **errors("perm.denied")}, openapi_extra=TIME_RULES)
async def export_instance_audit_log(
    rt: RuntimeDep, principal: PrincipalDep, action: ActionQuery = None, actor_id: ActorQuery = None,
    target_id: TargetQuery = None, guild_id: GuildQuery = None, created_from: FromQuery = None,
    created_to: ToQuery = None,
) -> Response:
    filters = audit_filters(action, actor_id, target_id, guild_id, created_from, created_to)
    export = service.check_audit_export(rt, principal, filters)
    return StreamingResponse(export.stream(), media_type="text/csv; charset=utf-8",
                             headers={"Content-Disposition": f'attachment; filename="{export.filename}"'})

"""Routes of instance administration: users (docs/admin.md, "Users"). Parse, one service call."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from pydantic import AfterValidator

from meadhall.admin.users import actions, service
from meadhall.admin.users import schemas as s
from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import ID_SCHEMA, errors
from meadhall.api.pagination import query_id
from meadhall.auth.deps import ClientInfo, PrincipalDep
from meadhall.core.limits import PAGE_DEFAULT, PAGE_MAX
from meadhall.core.text import check_single_line

router = APIRouter(tags=["instance"])

# Every action on one account: an administrator, a known account, a fresh step-up, in that order.
_ACTION = ("perm.denied", "user.not_found", "auth.step_up_required")


@router.get("/instance/users", operation_id="listInstanceUsers", response_model=s.AdminUsersResponse,
            responses=errors("perm.denied"))
async def list_instance_users(
    rt: RuntimeDep,
    principal: PrincipalDep,
    q: Annotated[str | None, Query(min_length=1, max_length=200,
                                   description="Part of the username or display name, any case"),
                 AfterValidator(check_single_line)] = None,
    email: Annotated[str | None, Query(min_length=1, max_length=254, description="The exact email, any case"),
                     AfterValidator(check_single_line)] = None,
    banned: Annotated[Literal["true", "false"] | None, Query(description="`true`: banned accounts only")] = None,
    imported: Annotated[Literal["true", "false"] | None, Query(
        description="`true`: imported authors only (an extension of the contract, docs/imported-authors.md)")
                        ] = None,
    before: Annotated[str | None, Query(description="Accounts older than this id", json_schema_extra=ID_SCHEMA)
                      ] = None,
    limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT,
) -> dict:
    return await service.access_instance_users(rt, principal, q, email, banned == "true",
                                               query_id("before", before), limit, imported=imported == "true")


@router.get("/instance/users/{user_id}", operation_id="getInstanceUser", response_model=s.AdminUserDetailResponse,
            responses=errors("perm.denied", "user.not_found"))
async def get_instance_user(rt: RuntimeDep, user_id: str, principal: PrincipalDep) -> dict:
    return await service.access_instance_user(rt, principal, user_id)


@router.post("/instance/users/{user_id}/ban", operation_id="banInstanceUser", response_model=s.AdminUserResponse,
             responses=errors(*_ACTION, "user.already_banned"))
async def ban_instance_user(rt: RuntimeDep, user_id: str, body: s.InstanceBanRequest, principal: PrincipalDep
                            ) -> dict:
    return await actions.do_ban_account(rt, principal, user_id, body.reason)


@router.post("/instance/users/{user_id}/unban", operation_id="unbanInstanceUser",
             response_model=s.AdminUserResponse, responses=errors(*_ACTION, "user.not_banned"))
async def unban_instance_user(rt: RuntimeDep, user_id: str, principal: PrincipalDep) -> dict:
    return await actions.do_unban_user(rt, principal, user_id)


@router.delete("/instance/users/{user_id}/sessions/{session_id}", operation_id="revokeInstanceUserSession",
               status_code=204, responses=errors(*_ACTION, "session.not_found"))
async def revoke_instance_user_session(rt: RuntimeDep, user_id: str, session_id: str, principal: PrincipalDep,
                                       client: ClientInfo) -> Response:
    await actions.do_revoke_user_session(rt, principal, user_id, session_id, client)
    return Response(status_code=204)


@router.post("/instance/users/{user_id}/reset-2fa", operation_id="resetInstanceUser2fa",
             response_model=s.AdminUserResponse, responses=errors(*_ACTION, "auth.2fa_not_enabled"))
async def reset_instance_user_2fa(rt: RuntimeDep, user_id: str, principal: PrincipalDep, client: ClientInfo
                                  ) -> dict:
    return await actions.do_reset_user_2fa(rt, principal, user_id, client)


@router.post("/instance/users/{user_id}/temporary-password", operation_id="setInstanceUserTemporaryPassword",
             response_model=s.TemporaryPasswordResponse, responses=errors(*_ACTION))
async def set_instance_user_temporary_password(rt: RuntimeDep, user_id: str, response: Response,
                                               principal: PrincipalDep, client: ClientInfo) -> dict:
    # The answer carries a credential: no cache may keep it.
    response.headers["Cache-Control"] = "no-store"
    return await actions.do_set_temporary_password(rt, principal, user_id, client)


@router.post("/instance/users/{user_id}/logout-all", operation_id="logoutInstanceUserEverywhere",
             status_code=204, responses=errors(*_ACTION))
async def logout_instance_user_everywhere(rt: RuntimeDep, user_id: str, principal: PrincipalDep,
                                          client: ClientInfo) -> Response:
    await actions.do_logout_user_everywhere(rt, principal, user_id, client)
    return Response(status_code=204)


@router.put("/instance/users/{user_id}/admin", operation_id="grantInstanceAdmin", response_model=s.AdminUserResponse,
            responses=errors(*_ACTION))
async def grant_instance_admin(rt: RuntimeDep, user_id: str, principal: PrincipalDep) -> dict:
    return await actions.do_grant_instance_admin(rt, principal, user_id)


@router.delete("/instance/users/{user_id}/admin", operation_id="revokeInstanceAdmin",
               response_model=s.AdminUserResponse, responses=errors(*_ACTION, "instance.last_admin"))
async def revoke_instance_admin(rt: RuntimeDep, user_id: str, principal: PrincipalDep) -> dict:
    return await actions.do_revoke_instance_admin(rt, principal, user_id)

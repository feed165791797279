"""Routes of /guilds/{id}/members (a member's roles and the kick included): parse, one service call."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response
from pydantic import AfterValidator

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import ID_SCHEMA, errors, rules
from meadhall.auth.deps import PrincipalDep
from meadhall.core.limits import PAGE_DEFAULT, PAGE_MAX
from meadhall.core.text import check_single_line
from meadhall.guilds.members import schemas as member_schemas
from meadhall.guilds.members import service as member_service
from meadhall.guilds.moderation import service as moderation
from meadhall.guilds.roles import service as role_service

router = APIRouter(tags=["members"])

NO_GUILD = "guild.not_found"
PAGE = "/guilds/{guild_id}/members"


# ---- members -----------------------------------------------------------------------------------


@router.get(PAGE, response_model=member_schemas.MembersResponse, responses=errors(NO_GUILD))
async def list_members(rt: RuntimeDep, guild_id: str, principal: PrincipalDep,
                       after: Annotated[str | None, Query(description="Members with a greater user id", json_schema_extra=ID_SCHEMA)] = None,
                       limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT,
                       q: Annotated[str | None, Query(max_length=100, description="Name or nick prefix"),
                                    AfterValidator(check_single_line)] = None
                       ) -> dict:
    return await member_service.access_members(rt, principal, guild_id, after, limit, q)


# Declared before /{user_id}: the literal segment wins (docs/architecture.md), so /members/@me is a path of
# its own with the methods it declares (api/routing.py).
@router.get(PAGE + "/@me", operation_id="getOwnMember", response_model=member_schemas.MemberResponse,
                   responses=errors(NO_GUILD, "member.not_found"))
async def get_own_member(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> dict:
    return await member_service.access_member_view(rt, principal, guild_id, "@me")


@router.get(PAGE + "/{user_id}", response_model=member_schemas.MemberResponse,
                   responses=errors(NO_GUILD, "member.not_found"))
async def get_member(rt: RuntimeDep, guild_id: str, user_id: str, principal: PrincipalDep) -> dict:
    return await member_service.access_member_view(rt, principal, guild_id, user_id)


# Declared before /{user_id}: the literal segment wins.
@router.patch(PAGE + "/@me", operation_id="updateOwnMember", response_model=member_schemas.MemberResponse,
                     responses=errors(NO_GUILD, "member.not_found", "perm.denied"))
async def update_me(rt: RuntimeDep, guild_id: str, body: member_schemas.MemberSelfPatch, principal: PrincipalDep) -> dict:
    return await member_service.do_update_member(rt, principal, guild_id, "@me", body.changes())


@router.patch(PAGE + "/{user_id}", response_model=member_schemas.MemberResponse,
                     openapi_extra=rules({"timeout_until": "in the future, at most 28 days from now"}),
                     responses=errors(NO_GUILD, "member.not_found", "perm.denied"))
async def update_member(rt: RuntimeDep, guild_id: str, user_id: str, body: member_schemas.MemberPatch,
                        principal: PrincipalDep) -> dict:
    return await member_service.do_update_member(rt, principal, guild_id, user_id, body.changes())


@router.delete(PAGE + "/{user_id}", status_code=204,
                      responses=errors(NO_GUILD, "member.not_found", "perm.denied"))
async def kick_member(rt: RuntimeDep, guild_id: str, user_id: str, principal: PrincipalDep) -> Response:
    await moderation.do_kick_member(rt, principal, guild_id, user_id)
    return Response(status_code=204)


# Every member holds the default role implicitly: it is neither given nor taken (stored state, so a rule).
_NOT_DEFAULT_ROLE = rules({"role_id": "not the server's default role, which every member holds"},
                          code="role.default_role")


@router.put(PAGE + "/{user_id}/roles/{role_id}", status_code=204, openapi_extra=_NOT_DEFAULT_ROLE,
                   responses=errors(NO_GUILD, "member.not_found", "role.not_found", "perm.denied",
                                    "role.default_role"))
async def add_member_role(rt: RuntimeDep, guild_id: str, user_id: str, role_id: str,
                          principal: PrincipalDep) -> Response:
    await role_service.do_set_member_role(rt, principal, guild_id, user_id, role_id, assign=True)
    return Response(status_code=204)


@router.delete(PAGE + "/{user_id}/roles/{role_id}", status_code=204, openapi_extra=_NOT_DEFAULT_ROLE,
                      responses=errors(NO_GUILD, "member.not_found", "role.not_found", "perm.denied",
                                       "role.default_role"))
async def remove_member_role(rt: RuntimeDep, guild_id: str, user_id: str, role_id: str,
                             principal: PrincipalDep) -> Response:
    await role_service.do_set_member_role(rt, principal, guild_id, user_id, role_id, assign=False)
    return Response(status_code=204)

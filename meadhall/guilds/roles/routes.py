"""Routes of /guilds/{id}/roles: parse, one service call."""

from __future__ import annotations

from fastapi import APIRouter, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors, rules
from meadhall.auth.deps import PrincipalDep
from meadhall.guilds.roles import schemas as s
from meadhall.guilds.roles import service as role_service

router = APIRouter(tags=["roles"])

NO_GUILD = "guild.not_found"


@router.get("/guilds/{guild_id}/roles", response_model=s.RolesResponse, responses=errors(NO_GUILD))
async def list_roles(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> dict:
    return await role_service.access_roles(rt, principal, guild_id)


@router.post("/guilds/{guild_id}/roles", status_code=201, response_model=s.RoleResponse,
                  responses=errors(NO_GUILD, "perm.denied", "role.limit_reached", "cosmetic.not_found"))
async def create_role(rt: RuntimeDep, guild_id: str, body: s.RoleCreate, principal: PrincipalDep) -> dict:
    return await role_service.do_create_role(rt, principal, guild_id, body.values())


@router.patch("/guilds/{guild_id}/roles", response_model=s.RolesResponse,
                   openapi_extra=rules({"roles.id": "a role of this server, each listed once"}),
                   responses=errors(NO_GUILD, "perm.denied", "role.default_role"))
async def reorder_roles(rt: RuntimeDep, guild_id: str, body: s.RoleReorder, principal: PrincipalDep) -> dict:
    return await role_service.do_reorder_roles(rt, principal, guild_id, body.moves())


@router.get("/guilds/{guild_id}/roles/{role_id}", response_model=s.RoleResponse,
                 responses=errors(NO_GUILD, "role.not_found"))
async def get_role(rt: RuntimeDep, guild_id: str, role_id: str, principal: PrincipalDep) -> dict:
    return await role_service.access_role_view(rt, principal, guild_id, role_id)


@router.patch("/guilds/{guild_id}/roles/{role_id}", response_model=s.RoleResponse,
                   openapi_extra=rules({"name": "the default role (its id is the server's) keeps its name"},
                                       code="role.default_role"),
                   responses=errors(NO_GUILD, "role.not_found", "perm.denied", "role.default_role",
                                    "cosmetic.not_found"))
async def update_role(rt: RuntimeDep, guild_id: str, role_id: str, body: s.RolePatch,
                      principal: PrincipalDep) -> dict:
    return await role_service.do_update_role(rt, principal, guild_id, role_id, body.changes())


@router.delete("/guilds/{guild_id}/roles/{role_id}", status_code=204,
                    responses=errors(NO_GUILD, "role.not_found", "perm.denied", "role.default_role"))
async def delete_role(rt: RuntimeDep, guild_id: str, role_id: str, principal: PrincipalDep) -> Response:
    await role_service.do_delete_role(rt, principal, guild_id, role_id)
    return Response(status_code=204)

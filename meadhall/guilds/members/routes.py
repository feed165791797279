"""Routes of /guilds/{id}/members, /roles and /bans: parse, one service call."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query, Request, Response
from pydantic import AfterValidator

from meadhall.api.openapi import ID_SCHEMA, errors, rules
from meadhall.auth.deps import Session
from meadhall.core.limits import PAGE_DEFAULT, PAGE_MAX
from meadhall.core.text import check_single_line
from meadhall.guilds.members import schemas as member_schemas
from meadhall.guilds.members import service as member_service
from meadhall.guilds.moderation import service as moderation
from meadhall.guilds.roles import service as role_service

member_routes = APIRouter(tags=["members"])
role_routes = APIRouter(tags=["roles"])
ban_routes = APIRouter(tags=["bans"])
router = APIRouter()

NO_GUILD = "guild.not_found"
PAGE = "/guilds/{guild_id}/members"


def _rt(request: Request):  # type: ignore[no-untyped-def]
    return request.app.state.runtime


def _done() -> Response:
    return Response(status_code=204)


# ---- members -----------------------------------------------------------------------------------


@member_routes.get(PAGE, response_model=member_schemas.MembersResponse, responses=errors(NO_GUILD))
async def list_members(request: Request, guild_id: str, principal: Session,
                       after: Annotated[str | None, Query(description="Members with a greater user id", json_schema_extra=ID_SCHEMA)] = None,
                       limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT,
                       q: Annotated[str | None, Query(max_length=100, description="Name or nick prefix"),
                                    AfterValidator(check_single_line)] = None
                       ) -> dict:
    return await member_service.access_members(_rt(request), principal, guild_id, after, limit, q)


# Declared before /{user_id}: the literal segment wins (API.md 3, "Routing"), so /members/@me is a path of
# its own with the methods it declares (api/routing.py).
@member_routes.get(PAGE + "/@me", operation_id="getOwnMember", response_model=member_schemas.MemberResponse,
                   responses=errors(NO_GUILD, "member.not_found"))
async def get_own_member(request: Request, guild_id: str, principal: Session) -> dict:
    return await member_service.access_member_view(_rt(request), principal, guild_id, "@me")


@member_routes.get(PAGE + "/{user_id}", response_model=member_schemas.MemberResponse,
                   responses=errors(NO_GUILD, "member.not_found"))
async def get_member(request: Request, guild_id: str, user_id: str, principal: Session) -> dict:
    return await member_service.access_member_view(_rt(request), principal, guild_id, user_id)


# Declared before /{user_id}: the literal segment wins.
@member_routes.patch(PAGE + "/@me", operation_id="updateOwnMember", response_model=member_schemas.MemberResponse,
                     responses=errors(NO_GUILD, "member.not_found", "perm.denied"))
async def update_me(request: Request, guild_id: str, body: member_schemas.MemberSelfPatch, principal: Session) -> dict:
    return await member_service.do_update_member(_rt(request), principal, guild_id, "@me", body.changes())


@member_routes.patch(PAGE + "/{user_id}", response_model=member_schemas.MemberResponse,
                     openapi_extra=rules({"timeout_until": "in the future, at most 28 days from now"}),
                     responses=errors(NO_GUILD, "member.not_found", "perm.denied"))
async def update_member(request: Request, guild_id: str, user_id: str, body: member_schemas.MemberPatch,
                        principal: Session) -> dict:
    return await member_service.do_update_member(_rt(request), principal, guild_id, user_id, body.changes())


@member_routes.delete(PAGE + "/{user_id}", status_code=204,
                      responses=errors(NO_GUILD, "member.not_found", "perm.denied"))
async def kick_member(request: Request, guild_id: str, user_id: str, principal: Session) -> Response:
    await member_service.do_kick_member(_rt(request), principal, guild_id, user_id)
    return _done()


@member_routes.put(PAGE + "/{user_id}/roles/{role_id}", status_code=204,
                   responses=errors(NO_GUILD, "member.not_found", "role.not_found", "perm.denied",
                                    "role.default_role"))
async def add_member_role(request: Request, guild_id: str, user_id: str, role_id: str,
                          principal: Session) -> Response:
    await role_service.do_set_member_role(_rt(request), principal, guild_id, user_id, role_id, assign=True)
    return _done()


@member_routes.delete(PAGE + "/{user_id}/roles/{role_id}", status_code=204,
                      responses=errors(NO_GUILD, "member.not_found", "role.not_found", "perm.denied",
                                       "role.default_role"))
async def remove_member_role(request: Request, guild_id: str, user_id: str, role_id: str,
                             principal: Session) -> Response:
    await role_service.do_set_member_role(_rt(request), principal, guild_id, user_id, role_id, assign=False)
    return _done()


# ---- roles -------------------------------------------------------------------------------------


@role_routes.get("/guilds/{guild_id}/roles", response_model=member_schemas.RolesResponse, responses=errors(NO_GUILD))
async def list_roles(request: Request, guild_id: str, principal: Session) -> dict:
    return await role_service.access_roles(_rt(request), principal, guild_id)


@role_routes.post("/guilds/{guild_id}/roles", status_code=201, response_model=member_schemas.RoleResponse,
                  responses=errors(NO_GUILD, "perm.denied", "role.limit_reached", "cosmetic.not_found"))
async def create_role(request: Request, guild_id: str, body: member_schemas.RoleCreate, principal: Session) -> dict:
    return await role_service.do_create_role(_rt(request), principal, guild_id, body.values())


@role_routes.patch("/guilds/{guild_id}/roles", response_model=member_schemas.RolesResponse,
                   openapi_extra=rules({"roles.id": "a role of this server, each listed once"}),
                   responses=errors(NO_GUILD, "perm.denied", "role.default_role"))
async def reorder_roles(request: Request, guild_id: str, body: member_schemas.RoleReorder, principal: Session) -> dict:
    return await role_service.do_reorder_roles(_rt(request), principal, guild_id, body.moves())


@role_routes.get("/guilds/{guild_id}/roles/{role_id}", response_model=member_schemas.RoleResponse,
                 responses=errors(NO_GUILD, "role.not_found"))
async def get_role(request: Request, guild_id: str, role_id: str, principal: Session) -> dict:
    return await role_service.access_role_view(_rt(request), principal, guild_id, role_id)


@role_routes.patch("/guilds/{guild_id}/roles/{role_id}", response_model=member_schemas.RoleResponse,
                   openapi_extra=rules({"name": "the default role (its id is the server's) keeps its name"},
                                       code="role.default_role"),
                   responses=errors(NO_GUILD, "role.not_found", "perm.denied", "role.default_role",
                                    "cosmetic.not_found"))
async def update_role(request: Request, guild_id: str, role_id: str, body: member_schemas.RolePatch,
                      principal: Session) -> dict:
    return await role_service.do_update_role(_rt(request), principal, guild_id, role_id, body.changes())


@role_routes.delete("/guilds/{guild_id}/roles/{role_id}", status_code=204,
                    responses=errors(NO_GUILD, "role.not_found", "perm.denied", "role.default_role"))
async def delete_role(request: Request, guild_id: str, role_id: str, principal: Session) -> Response:
    await role_service.do_delete_role(_rt(request), principal, guild_id, role_id)
    return _done()


# ---- bans --------------------------------------------------------------------------------------


@ban_routes.get("/guilds/{guild_id}/bans", response_model=member_schemas.BansResponse, responses=errors(NO_GUILD, "perm.denied"))
async def list_bans(request: Request, guild_id: str, principal: Session) -> dict:
    return await moderation.access_bans(_rt(request), principal, guild_id)


@ban_routes.get("/guilds/{guild_id}/bans/{user_id}", response_model=member_schemas.BanResponse,
                responses=errors(NO_GUILD, "perm.denied", "ban.not_found"))
async def get_ban(request: Request, guild_id: str, user_id: str, principal: Session) -> dict:
    return await moderation.access_ban_view(_rt(request), principal, guild_id, user_id)


@ban_routes.put("/guilds/{guild_id}/bans/{user_id}", status_code=204,
                responses=errors(NO_GUILD, "perm.denied", "user.not_found", "member.not_found"))
async def ban_user(request: Request, guild_id: str, user_id: str, principal: Session,
                   body: Annotated[member_schemas.BanPut | None, Body()] = None) -> Response:
    await moderation.do_ban_user(_rt(request), principal, guild_id, user_id, body.reason if body else None)
    return _done()


@ban_routes.delete("/guilds/{guild_id}/bans/{user_id}", status_code=204,
                   responses=errors(NO_GUILD, "perm.denied", "ban.not_found"))
async def unban_user(request: Request, guild_id: str, user_id: str, principal: Session) -> Response:
    await moderation.do_unban_user(_rt(request), principal, guild_id, user_id)
    return _done()


router.include_router(member_routes)
router.include_router(role_routes)
router.include_router(ban_routes)

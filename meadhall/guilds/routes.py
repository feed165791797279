"""Routes of /guilds/{id} (the guild itself, its icon, banner and splash) and /users/@me/guilds: parse, one
service call."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import AfterValidator

from meadhall.api.deps import RuntimeDep
from meadhall.api.multipart import multipart_file
from meadhall.api.openapi import errors, rules
from meadhall.api.pagination import Pagination
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.core.text import check_single_line
from meadhall.files import slots
from meadhall.files.schemas import IMAGE_UPLOAD_BODY, UPLOAD_ERRORS
from meadhall.guilds import schemas as s
from meadhall.guilds import service as guild_service
from meadhall.guilds.images import GUILD_IMAGES, GuildImage

guilds = APIRouter(tags=["guilds"])
me = APIRouter(tags=["users"])
images = APIRouter(tags=["files"])


@guilds.post("/guilds", status_code=201, response_model=s.GuildResponse, dependencies=[limited("guilds.create")],
             responses=errors("template.not_found", "guild.limit_reached"))
async def create_guild(rt: RuntimeDep, body: s.GuildCreate, principal: PrincipalDep) -> dict:
    return await guild_service.do_create_guild(rt, principal, body.name, body.description, body.template_id)


@guilds.get("/guilds/public", operation_id="listPublicGuilds", response_model=s.PublicGuildsResponse)
async def public_guilds(rt: RuntimeDep, principal: PrincipalDep, page: Pagination,
                        q: Annotated[str | None, Query(min_length=1, max_length=200),
                                     AfterValidator(check_single_line)] = None) -> dict:
    return await guild_service.access_public_guilds(rt, principal, q, page.before, page.limit)


@guilds.get("/guilds/{guild_id}", response_model=s.GuildResponse, responses=errors("guild.not_found"))
async def get_guild(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> dict:
    return await guild_service.access_guild_view(rt, principal, guild_id)


@guilds.patch("/guilds/{guild_id}", response_model=s.GuildResponse,
              openapi_extra=rules({"system_channel_id": "a text room of this server",
                                   "owner_id": "a member of this server"}),
              responses=errors("guild.not_found", "perm.denied", "auth.step_up_required"))
async def update_guild(rt: RuntimeDep, guild_id: str, body: s.GuildPatch, principal: PrincipalDep) -> dict:
    return await guild_service.do_update_guild(rt, principal, guild_id, body.changes())


@guilds.delete("/guilds/{guild_id}", status_code=204,
               responses=errors("guild.not_found", "perm.denied", "auth.step_up_required"))
async def delete_guild(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> Response:
    await guild_service.do_delete_guild(rt, principal, guild_id)
    return Response(status_code=204)


@me.get("/users/@me/guilds", operation_id="listMyGuilds", response_model=s.GuildsResponse)
async def my_guilds(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    return await guild_service.access_own_guilds(rt, principal)


@me.delete("/users/@me/guilds/{guild_id}", status_code=204,
           responses=errors("guild.not_found", "guild.owner_cannot_leave"))
async def leave_guild(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> Response:
    await guild_service.do_leave_guild(rt, principal, guild_id)
    return Response(status_code=204)


def _guild_image_routes(kind: str) -> None:
    path = f"/guilds/{{guild_id}}/{kind}"
    found = ("guild.not_found", "perm.denied")

    async def set_guild_image(request: Request, rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> Any:
        return await slots.set_image(rt, GuildImage(principal, guild_id, kind), multipart_file(request),
                                 uploader_id=principal.user_id)

    async def remove_guild_image(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> Any:
        return await slots.remove_image(rt, GuildImage(principal, guild_id, kind))

    images.post(path, response_model=s.GuildResponse, dependencies=[limited("uploads")],
                openapi_extra=IMAGE_UPLOAD_BODY, responses=errors(*found, *UPLOAD_ERRORS),
                name=f"set_guild_{kind}", summary=f"Set Guild {kind.title()}")(set_guild_image)
    images.delete(path, response_model=s.GuildResponse,
                  responses=errors(*found, "auth.origin_mismatch"),
                  name=f"remove_guild_{kind}", summary=f"Remove Guild {kind.title()}")(remove_guild_image)


for _kind in GUILD_IMAGES:
    _guild_image_routes(_kind)

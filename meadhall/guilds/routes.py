"""Routes of /guilds/*, /channels/{id} (guild rooms) and /users/@me/guilds: parse, one service call."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import AfterValidator

from meadhall.api.openapi import errors, rules
from meadhall.api.pagination import Pagination
from meadhall.auth.deps import Session, limited
from meadhall.core.text import check_single_line
from meadhall.files import slots
from meadhall.files.schemas import IMAGE_UPLOAD_BODY
from meadhall.guilds import schemas as s
from meadhall.guilds import service as guild_service
from meadhall.guilds.images import GUILD_IMAGES, UPLOAD_ERRORS, GuildImage
from meadhall.guilds.rooms import service as room_service

guilds = APIRouter(tags=["guilds"])
rooms = APIRouter(tags=["channels"])
me = APIRouter(tags=["users"])
images = APIRouter(tags=["files"])


def _rt(request: Request):  # type: ignore[no-untyped-def]
    return request.app.state.runtime


@guilds.post("/guilds", status_code=201, response_model=s.GuildResponse, dependencies=[limited("guilds.create")],
             responses=errors("template.not_found", "guild.limit_reached"))
async def create_guild(request: Request, body: s.GuildCreate, principal: Session) -> dict:
    return await guild_service.do_create_guild(_rt(request), principal, body.name, body.description, body.template_id)


@guilds.get("/guilds/public", operation_id="listPublicGuilds", response_model=s.PublicGuildsResponse)
async def public_guilds(request: Request, principal: Session, page: Pagination,
                        q: Annotated[str | None, Query(min_length=1, max_length=200),
                                     AfterValidator(check_single_line)] = None) -> dict:
    return await guild_service.access_public_guilds(_rt(request), principal, q, page.before, page.limit)


@guilds.get("/guilds/{guild_id}", response_model=s.GuildResponse, responses=errors("guild.not_found"))
async def get_guild(request: Request, guild_id: str, principal: Session) -> dict:
    return await guild_service.access_guild_view(_rt(request), principal, guild_id)


@guilds.patch("/guilds/{guild_id}", response_model=s.GuildResponse,
              openapi_extra=rules({"system_channel_id": "a text room of this server",
                                   "owner_id": "a member of this server"}),
              responses=errors("guild.not_found", "perm.denied", "auth.step_up_required"))
async def update_guild(request: Request, guild_id: str, body: s.GuildPatch, principal: Session) -> dict:
    return await guild_service.do_update_guild(_rt(request), principal, guild_id, body.changes())


@guilds.delete("/guilds/{guild_id}", status_code=204,
               responses=errors("guild.not_found", "perm.denied", "auth.step_up_required"))
async def delete_guild(request: Request, guild_id: str, principal: Session) -> Response:
    await guild_service.do_delete_guild(_rt(request), principal, guild_id)
    return Response(status_code=204)


@guilds.get("/guilds/{guild_id}/channels", response_model=s.ChannelsResponse, responses=errors("guild.not_found"))
async def list_channels(request: Request, guild_id: str, principal: Session) -> dict:
    return await room_service.access_channels(_rt(request), principal, guild_id)


@guilds.post("/guilds/{guild_id}/channels", status_code=201, response_model=s.ChannelResponse,
             openapi_extra=rules({"parent_id": "must be a category of this server (a referenced id)",
                                  "permission_overrides.id": "a role or member of this server"}),
             responses=errors("guild.not_found", "perm.denied", "channel.limit_reached", "role.not_found",
                              "member.not_found"))
async def create_channel(request: Request, guild_id: str, body: s.ChannelCreate, principal: Session) -> dict:
    data = body.model_dump()
    data["permission_overrides"] = (
        None if body.permission_overrides is None else [o.model_dump() for o in body.permission_overrides]
    )
    return await room_service.do_create_channel(_rt(request), principal, guild_id, data)


@guilds.patch("/guilds/{guild_id}/channels", response_model=s.ChannelsResponse,
              openapi_extra=rules({"channels.id": "a room of this server, each listed once",
                                   "channels.parent_id": "a category of this server; none for a category"}),
              responses=errors("guild.not_found", "perm.denied"))
async def reorder_channels(request: Request, guild_id: str, body: s.ChannelReorder, principal: Session) -> dict:
    return await room_service.do_reorder_channels(_rt(request), principal, guild_id, body.moves())


@rooms.get("/channels/{channel_id}", response_model=s.ChannelResponse, responses=errors("channel.not_found"))
async def get_channel(request: Request, channel_id: str, principal: Session) -> dict:
    return await room_service.access_channel_view(_rt(request), principal, channel_id)


@rooms.patch("/channels/{channel_id}", response_model=s.ChannelResponse,
             openapi_extra=rules({"parent_id": "a category of this server; none for a category",
                                  "user_limit": "only for a voice room",
                                  "topic": "none for a category", "slowmode_seconds": "none for a category"}),
             responses=errors("channel.not_found", "perm.denied"))
async def update_channel(request: Request, channel_id: str, body: s.ChannelPatch, principal: Session) -> dict:
    return await room_service.do_update_channel(_rt(request), principal, channel_id, body.changes())


@rooms.delete("/channels/{channel_id}", status_code=204, responses=errors("channel.not_found", "perm.denied"))
async def delete_channel(request: Request, channel_id: str, principal: Session) -> Response:
    await room_service.do_delete_channel(_rt(request), principal, channel_id)
    return Response(status_code=204)


@rooms.put("/channels/{channel_id}/permissions/{target_id}", operation_id="setPermissionOverride",
          status_code=204,
           responses=errors("channel.not_found", "perm.denied", "role.not_found", "member.not_found"))
async def put_override(request: Request, channel_id: str, target_id: str, body: s.OverridePut,
                       principal: Session) -> Response:
    await room_service.do_set_override(_rt(request), principal, channel_id, target_id, body.type, int(body.allow),
                                int(body.deny))
    return Response(status_code=204)


@rooms.delete("/channels/{channel_id}/permissions/{target_id}", operation_id="deletePermissionOverride",
              status_code=204,
              responses=errors("channel.not_found", "perm.denied", "override.not_found"))
async def delete_override(request: Request, channel_id: str, target_id: str, principal: Session) -> Response:
    await room_service.do_delete_override(_rt(request), principal, channel_id, target_id)
    return Response(status_code=204)


@me.get("/users/@me/guilds", operation_id="listMyGuilds", response_model=s.GuildsResponse)
async def my_guilds(request: Request, principal: Session) -> dict:
    return await guild_service.access_own_guilds(_rt(request), principal)


@me.delete("/users/@me/guilds/{guild_id}", status_code=204,
           responses=errors("guild.not_found", "guild.owner_cannot_leave"))
async def leave_guild(request: Request, guild_id: str, principal: Session) -> Response:
    await guild_service.do_leave_guild(_rt(request), principal, guild_id)
    return Response(status_code=204)


def _guild_image_routes(kind: str) -> None:
    path = f"/guilds/{{guild_id}}/{kind}"
    found = ("guild.not_found", "perm.denied")

    async def set_guild_image(request: Request, guild_id: str, principal: Session) -> Any:
        return await slots.set_image(_rt(request), principal, GuildImage(principal, guild_id, kind), request)

    async def remove_guild_image(request: Request, guild_id: str, principal: Session) -> Any:
        return await slots.remove_image(_rt(request), GuildImage(principal, guild_id, kind))

    images.post(path, response_model=s.GuildResponse, dependencies=[limited("uploads")],
                openapi_extra=IMAGE_UPLOAD_BODY, responses=errors(*found, *UPLOAD_ERRORS),
                name=f"set_guild_{kind}", summary=f"Set Guild {kind.title()}")(set_guild_image)
    images.delete(path, response_model=s.GuildResponse,
                  responses=errors(*found, "auth.origin_mismatch"),
                  name=f"remove_guild_{kind}", summary=f"Remove Guild {kind.title()}")(remove_guild_image)


for _kind in GUILD_IMAGES:
    _guild_image_routes(_kind)

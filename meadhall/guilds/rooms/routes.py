"""Routes of guild rooms: /guilds/{id}/channels, a room's permission overrides and its background: parse, one
service call. GET/PATCH/DELETE /channels/{id} answer for guild rooms and conversations alike, so they live
where both are known (meadhall.social.conversations.routes) and call this package's services."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.multipart import multipart_file
from meadhall.api.openapi import errors, rules, with_rules
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.files import slots
from meadhall.files.schemas import IMAGE_UPLOAD_BODY, UPLOAD_ERRORS
from meadhall.guilds.rooms import schemas as rs
from meadhall.guilds.rooms import service as room_service
from meadhall.guilds.rooms.images import RoomBackground

guild_rooms = APIRouter(tags=["guilds"])  # /guilds/{id}/channels
rooms = APIRouter(tags=["channels"])
images = APIRouter(tags=["files"])

# Room-only operations: a conversation the caller takes part in answers 422, a category too (backgrounds).
_ROOMS_ONLY = rules({"channel_id": "a room of a server; a direct conversation answers this"}, code="channel.wrong_type")


@guild_rooms.get("/guilds/{guild_id}/channels", response_model=rs.ChannelsResponse, responses=errors("guild.not_found"))
async def list_channels(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> dict:
    return await room_service.access_channels(rt, principal, guild_id)


@guild_rooms.post("/guilds/{guild_id}/channels", status_code=201, response_model=rs.ChannelResponse,
             openapi_extra=rules({"parent_id": "must be a category of this server (a referenced id)",
                                  "permission_overrides.id": "a role or member of this server"}),
             responses=errors("guild.not_found", "perm.denied", "channel.limit_reached", "role.not_found",
                              "member.not_found"))
async def create_channel(rt: RuntimeDep, guild_id: str, body: rs.ChannelCreate, principal: PrincipalDep) -> dict:
    data = body.model_dump()
    data["permission_overrides"] = (
        None if body.permission_overrides is None else [o.model_dump() for o in body.permission_overrides]
    )
    return await room_service.do_create_channel(rt, principal, guild_id, data)


@guild_rooms.patch("/guilds/{guild_id}/channels", response_model=rs.ChannelsResponse,
              openapi_extra=rules({"channels.id": "a room of this server, each listed once",
                                   "channels.parent_id": "a category of this server; none for a category"}),
              responses=errors("guild.not_found", "perm.denied"))
async def reorder_channels(rt: RuntimeDep, guild_id: str, body: rs.ChannelReorder, principal: PrincipalDep) -> dict:
    return await room_service.do_reorder_channels(rt, principal, guild_id, body.moves())


@rooms.put("/channels/{channel_id}/permissions/{target_id}", operation_id="setPermissionOverride",
          status_code=204, openapi_extra=_ROOMS_ONLY,
           responses=errors("channel.not_found", "perm.denied", "role.not_found", "member.not_found",
                            "channel.wrong_type"))
async def put_override(rt: RuntimeDep, channel_id: str, target_id: str, body: rs.OverridePut,
                       principal: PrincipalDep) -> Response:
    await room_service.do_set_override(rt, principal, channel_id, target_id, body.type, int(body.allow),
                                int(body.deny))
    return Response(status_code=204)


@rooms.delete("/channels/{channel_id}/permissions/{target_id}", operation_id="deletePermissionOverride",
              status_code=204, openapi_extra=_ROOMS_ONLY,
              responses=errors("channel.not_found", "perm.denied", "override.not_found", "channel.wrong_type"))
async def delete_override(rt: RuntimeDep, channel_id: str, target_id: str, principal: PrincipalDep) -> Response:
    await room_service.do_delete_override(rt, principal, channel_id, target_id)
    return Response(status_code=204)


@images.post("/channels/{channel_id}/background", response_model=rs.ChannelResponse,
             dependencies=[limited("uploads")], openapi_extra=with_rules(IMAGE_UPLOAD_BODY, _ROOMS_ONLY),
             responses=errors("channel.not_found", "perm.denied", "channel.wrong_type", *UPLOAD_ERRORS))
async def set_room_background(request: Request, rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict:
    return await slots.set_image(rt, RoomBackground(principal, channel_id), multipart_file(request),
                                 uploader_id=principal.user_id)


@images.delete("/channels/{channel_id}/background", response_model=rs.ChannelResponse, openapi_extra=_ROOMS_ONLY,
               responses=errors("channel.not_found", "perm.denied", "channel.wrong_type", "auth.origin_mismatch"))
async def remove_room_background(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict:
    return await slots.remove_image(rt, RoomBackground(principal, channel_id))

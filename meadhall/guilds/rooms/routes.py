"""Routes of guild rooms: parse, one service call."""

from __future__ import annotations

from fastapi import APIRouter, Request

from meadhall.api.openapi import errors
from meadhall.auth.deps import Session, limited
from meadhall.files import slots
from meadhall.files.schemas import IMAGE_UPLOAD_BODY
from meadhall.guilds import schemas as guild_schemas
from meadhall.guilds.images import UPLOAD_ERRORS
from meadhall.guilds.rooms.images import RoomBackground

images = APIRouter(tags=["files"])


def _rt(request: Request):  # type: ignore[no-untyped-def]
    return request.app.state.runtime


@images.post("/channels/{channel_id}/background", response_model=guild_schemas.ChannelResponse,
             dependencies=[limited("uploads")], openapi_extra=IMAGE_UPLOAD_BODY,
             responses=errors("channel.not_found", "perm.denied", "channel.wrong_type", *UPLOAD_ERRORS))
async def set_room_background(request: Request, channel_id: str, principal: Session) -> dict:
    return await slots.set_image(_rt(request), principal, RoomBackground(principal, channel_id), request)


@images.delete("/channels/{channel_id}/background", response_model=guild_schemas.ChannelResponse,
               responses=errors("channel.not_found", "perm.denied", "channel.wrong_type", "auth.origin_mismatch"))
async def remove_room_background(request: Request, channel_id: str, principal: Session) -> dict:
    return await slots.remove_image(_rt(request), RoomBackground(principal, channel_id))

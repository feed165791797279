"""Routes of files and image slots: parse, one service call, respond. Upload routes hand the request to
the service, which streams the multipart body itself."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Request

from meadhall.accounts import schemas as account_schemas
from meadhall.api.openapi import errors
from meadhall.auth.deps import Session, limited
from meadhall.files import attachments, serve, slots
from meadhall.files import schemas as s
from meadhall.files.serve import ContentResponse
from meadhall.guilds import invite_schemas
from meadhall.guilds import schemas as guild_schemas

router = APIRouter(tags=["files"])
content = APIRouter(tags=["files"])

UPLOAD_ERRORS = ("file.too_large", "file.unsupported_type", "auth.origin_mismatch")


def _rt(request: Request):  # type: ignore[no-untyped-def]
    return request.app.state.runtime


@router.post("/channels/{channel_id}/files", status_code=201, response_model=s.FileResponse,
             dependencies=[limited("uploads")], openapi_extra=s.UPLOAD_BODY,
             responses=errors("channel.not_found", "perm.denied", "channel.wrong_type", *UPLOAD_ERRORS))
async def upload_attachment(request: Request, channel_id: str, principal: Session) -> dict:
    return await attachments.upload_attachment(_rt(request), principal, channel_id, request)


@router.get("/files/{file_id}", operation_id="getFile", response_model=s.FileResponse, responses=errors("file.not_found"))
async def file_metadata(request: Request, file_id: str, principal: Session) -> dict:
    return await serve.metadata(_rt(request), principal, file_id)


@router.post("/users/@me/avatar", response_model=account_schemas.UserResponse, dependencies=[limited("uploads")],
             openapi_extra=s.IMAGE_UPLOAD_BODY, responses=errors(*UPLOAD_ERRORS))
async def set_avatar(request: Request, principal: Session) -> dict:
    rt = _rt(request)
    return await slots.set_image(rt, principal, slots.Avatar(rt, principal), request)


@router.delete("/users/@me/avatar", response_model=account_schemas.UserResponse,
               responses=errors("auth.origin_mismatch"))
async def remove_avatar(request: Request, principal: Session) -> dict:
    rt = _rt(request)
    return await slots.remove_image(rt, slots.Avatar(rt, principal))


def _guild_image_routes(kind: str) -> None:
    path = f"/guilds/{{guild_id}}/{kind}"
    found = ("guild.not_found", "perm.denied")

    async def set_guild_image(request: Request, guild_id: str, principal: Session) -> Any:
        return await slots.set_image(_rt(request), principal, slots.GuildImage(principal, guild_id, kind), request)

    async def remove_guild_image(request: Request, guild_id: str, principal: Session) -> Any:
        return await slots.remove_image(_rt(request), slots.GuildImage(principal, guild_id, kind))

    router.post(path, response_model=guild_schemas.GuildResponse, dependencies=[limited("uploads")],
                openapi_extra=s.IMAGE_UPLOAD_BODY, responses=errors(*found, *UPLOAD_ERRORS),
                name=f"set_guild_{kind}", summary=f"Set Guild {kind.title()}")(set_guild_image)
    router.delete(path, response_model=guild_schemas.GuildResponse,
                  responses=errors(*found, "auth.origin_mismatch"),
                  name=f"remove_guild_{kind}", summary=f"Remove Guild {kind.title()}")(remove_guild_image)


for _kind in slots.GUILD_IMAGES:
    _guild_image_routes(_kind)


@router.post("/channels/{channel_id}/background", response_model=guild_schemas.ChannelResponse,
             dependencies=[limited("uploads")], openapi_extra=s.IMAGE_UPLOAD_BODY,
             responses=errors("channel.not_found", "perm.denied", "channel.wrong_type", *UPLOAD_ERRORS))
async def set_room_background(request: Request, channel_id: str, principal: Session) -> dict:
    return await slots.set_image(_rt(request), principal, slots.RoomBackground(principal, channel_id), request)


@router.delete("/channels/{channel_id}/background", response_model=guild_schemas.ChannelResponse,
               responses=errors("channel.not_found", "perm.denied", "channel.wrong_type", "auth.origin_mismatch"))
async def remove_room_background(request: Request, channel_id: str, principal: Session) -> dict:
    return await slots.remove_image(_rt(request), slots.RoomBackground(principal, channel_id))


@router.post("/invites/{code}/background", response_model=invite_schemas.InviteResponse,
             dependencies=[limited("uploads")], openapi_extra=s.IMAGE_UPLOAD_BODY,
             responses=errors("invite.not_found", "perm.denied", *UPLOAD_ERRORS))
async def set_invite_background(request: Request, code: str, principal: Session) -> dict:
    rt = _rt(request)
    return await slots.set_image(rt, principal, slots.InviteBackground(rt, principal, code), request)


@router.delete("/invites/{code}/background", response_model=invite_schemas.InviteResponse,
               responses=errors("invite.not_found", "perm.denied", "auth.origin_mismatch"))
async def remove_invite_background(request: Request, code: str, principal: Session) -> dict:
    rt = _rt(request)
    return await slots.remove_image(rt, slots.InviteBackground(rt, principal, code))


# ---- content, outside /api/v1 -------------------------------------------------------------------

IfNoneMatch = Annotated[str | None, Header(description="An ETag from an earlier answer: 304 when unchanged")]


@content.get("/files/{file_id}", operation_id="getFileContent", status_code=200, response_class=ContentResponse, responses={**s.CONTENT_RESPONSES,
             **errors("file.not_found", "rate_limited")}, dependencies=[limited("files")])
async def file_content(request: Request, file_id: str, principal: Session, if_none_match: IfNoneMatch = None
                       ) -> ContentResponse:
    return await serve.content(_rt(request), principal, file_id, head=False, if_none_match=if_none_match)


@content.head("/files/{file_id}", operation_id="headFileContent", status_code=200, response_class=ContentResponse, responses={**s.CONTENT_RESPONSES,
              **errors("file.not_found", "rate_limited")}, dependencies=[limited("files")])
async def file_content_head(request: Request, file_id: str, principal: Session,
                            if_none_match: IfNoneMatch = None) -> ContentResponse:
    return await serve.content(_rt(request), principal, file_id, head=True, if_none_match=if_none_match)

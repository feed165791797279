"""Routes of /channels/{id}/invites, /guilds/{id}/invites and /invites/{code}:
parse, one service call."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.multipart import multipart_file
from meadhall.api.openapi import errors
from meadhall.auth.deps import PrincipalDep, limited, optional_principal
from meadhall.auth.sessions import Principal
from meadhall.files import slots
from meadhall.files.schemas import IMAGE_UPLOAD_BODY, UPLOAD_ERRORS
from meadhall.guilds.invites import schemas as invite_schemas
from meadhall.guilds.invites import service as invite_service
from meadhall.guilds.invites.images import InviteBackground

router = APIRouter(tags=["invites"])
images = APIRouter(tags=["files"])
OptionalSession = Annotated[Principal | None, Depends(optional_principal)]


@router.post("/channels/{channel_id}/invites", status_code=201, response_model=invite_schemas.InviteResponse,
             dependencies=[limited("invites.create")],
             responses=errors("channel.not_found", "perm.denied", "invite.limit_reached", "channel.wrong_type"))
async def create_invite(rt: RuntimeDep, channel_id: str, principal: PrincipalDep,
                        body: invite_schemas.InviteCreate | None = None) -> dict:
    body = body or invite_schemas.InviteCreate()
    return await invite_service.do_create_invite(rt, principal, channel_id, body.max_age_seconds, body.max_uses)


@router.get("/guilds/{guild_id}/invites", response_model=invite_schemas.InvitesResponse,
            responses=errors("guild.not_found", "perm.denied"))
async def list_invites(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> dict:
    return await invite_service.access_invites(rt, principal, guild_id)


@router.get("/invites/{code}", response_model=invite_schemas.InvitePreviewResponse, dependencies=[limited("invites.preview")],
            responses=errors("invite.not_found"),
            description="Works without a session; a session only decides `guild.is_member`.")
async def preview_invite(rt: RuntimeDep, code: str, principal: OptionalSession) -> dict:
    return await invite_service.access_invite_preview(rt, principal, code)


@router.post("/invites/{code}", response_model=invite_schemas.JoinResponse, dependencies=[limited("invites.join")],
             responses=errors("invite.not_found", "guild.banned", "guild.limit_reached"))
async def join_invite(rt: RuntimeDep, code: str, principal: PrincipalDep) -> dict:
    return await invite_service.do_join_invite(rt, principal, code)


@router.delete("/invites/{code}", status_code=204,
               responses=errors("invite.not_found", "perm.denied", "invite.public"))
async def delete_invite(rt: RuntimeDep, code: str, principal: PrincipalDep) -> Response:
    await invite_service.do_delete_invite(rt, principal, code)
    return Response(status_code=204)


@images.post("/invites/{code}/background", response_model=invite_schemas.InviteResponse,
             dependencies=[limited("uploads")], openapi_extra=IMAGE_UPLOAD_BODY,
             responses=errors("invite.not_found", "perm.denied", *UPLOAD_ERRORS))
async def set_invite_background(request: Request, rt: RuntimeDep, code: str, principal: PrincipalDep) -> dict:
    rt = rt
    return await slots.set_image(rt, InviteBackground(rt, principal, code), multipart_file(request),
                                 uploader_id=principal.user_id)


@images.delete("/invites/{code}/background", response_model=invite_schemas.InviteResponse,
               responses=errors("invite.not_found", "perm.denied", "auth.origin_mismatch"))
async def remove_invite_background(rt: RuntimeDep, code: str, principal: PrincipalDep) -> dict:
    rt = rt
    return await slots.remove_image(rt, InviteBackground(rt, principal, code))

"""Routes of /guilds/{id}/bans: parse, one service call."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors
from meadhall.auth.deps import PrincipalDep
from meadhall.guilds.moderation import schemas as s
from meadhall.guilds.moderation import service as moderation

router = APIRouter(tags=["bans"])

NO_GUILD = "guild.not_found"


@router.get("/guilds/{guild_id}/bans", response_model=s.BansResponse, responses=errors(NO_GUILD, "perm.denied"))
async def list_bans(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> dict:
    return await moderation.access_bans(rt, principal, guild_id)


@router.get("/guilds/{guild_id}/bans/{user_id}", response_model=s.BanResponse,
                responses=errors(NO_GUILD, "perm.denied", "ban.not_found"))
async def get_ban(rt: RuntimeDep, guild_id: str, user_id: str, principal: PrincipalDep) -> dict:
    return await moderation.access_ban_view(rt, principal, guild_id, user_id)


@router.put("/guilds/{guild_id}/bans/{user_id}", status_code=204,
                responses=errors(NO_GUILD, "perm.denied", "user.not_found", "member.not_found"))
async def ban_user(rt: RuntimeDep, guild_id: str, user_id: str, principal: PrincipalDep,
                   body: Annotated[s.BanPut | None, Body()] = None) -> Response:
    await moderation.do_ban_member(rt, principal, guild_id, user_id, body.reason if body else None,
                                   delete_message_seconds=body.delete_message_seconds if body else 0)
    return Response(status_code=204)


@router.delete("/guilds/{guild_id}/bans/{user_id}", status_code=204,
                   responses=errors(NO_GUILD, "perm.denied", "ban.not_found"))
async def unban_user(rt: RuntimeDep, guild_id: str, user_id: str, principal: PrincipalDep) -> Response:
    await moderation.do_unban_user(rt, principal, guild_id, user_id)
    return Response(status_code=204)

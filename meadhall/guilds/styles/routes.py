"""Routes of /users/@me/styles: parse, one service call (docs/customisation.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors, rules
from meadhall.auth.deps import PrincipalDep
from meadhall.guilds.schemas import Snowflake
from meadhall.guilds.styles import schemas as s
from meadhall.guilds.styles import service

router = APIRouter(tags=["users"])

SCOPE_RULES = {"guild_id": "required for scope guild, absent for scope friends"}


@router.get("/users/@me/styles", operation_id="getMyStyles", response_model=s.StylesResponse)
async def get_styles(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    return await service.access_styles(rt, principal)


@router.put("/users/@me/styles", operation_id="setMyStyle", response_model=s.StyleResponse,
            openapi_extra=rules({**SCOPE_RULES, "frame_id": "a frame available to you in this scope",
                                 "icon_id": "an icon available to you in this scope"}),
            responses=errors("guild.not_found"))
async def set_style(rt: RuntimeDep, body: s.StylePut, principal: PrincipalDep) -> dict:
    return await service.do_set_style(rt, principal, body.scope, body.guild_id, body.frame_id, body.icon_id,
                                      body.color)


@router.delete("/users/@me/styles", operation_id="deleteMyStyle", status_code=204,
               openapi_extra=rules(SCOPE_RULES), responses=errors("guild.not_found"))
async def delete_style(rt: RuntimeDep, principal: PrincipalDep, scope: Annotated[s.StyleScope, Query()],
                       guild_id: Annotated[Snowflake | None, Query()] = None) -> Response:
    await service.do_delete_style(rt, principal, scope, guild_id)
    return Response(status_code=204)

"""Routes of instance administration: servers (docs/admin.md, "Servers"). Parse, one service call."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from pydantic import AfterValidator

from meadhall.admin.guilds import schemas as s
from meadhall.admin.guilds import service
from meadhall.admin.guilds.queries import GuildFilter
from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import ID_SCHEMA, errors
from meadhall.api.pagination import query_id
from meadhall.auth.deps import PrincipalDep
from meadhall.core.limits import PAGE_DEFAULT, PAGE_MAX
from meadhall.core.text import check_single_line
from meadhall.guilds.schemas import GuildResponse

router = APIRouter(tags=["instance"])


@router.get("/instance/guilds", operation_id="listInstanceGuilds", response_model=s.AdminGuildsResponse,
            responses=errors("perm.denied"))
async def list_instance_guilds(
    rt: RuntimeDep,
    principal: PrincipalDep,
    q: Annotated[str | None, Query(min_length=1, max_length=200, description="Part of the name, any case"),
                 AfterValidator(check_single_line)] = None,
    owner_id: Annotated[str | None, Query(json_schema_extra=ID_SCHEMA)] = None,
    main: Annotated[Literal["true", "false"] | None, Query()] = None,
    before: Annotated[str | None, Query(description="Servers older than this id", json_schema_extra=ID_SCHEMA)] = None,
    limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT,
) -> dict:
    f = GuildFilter(q=q, owner_id=query_id("owner_id", owner_id), main=None if main is None else main == "true")
    return await service.access_instance_guilds(rt, principal, f, query_id("before", before), limit)


@router.patch("/instance/guilds/{guild_id}", operation_id="updateInstanceGuild", response_model=GuildResponse,
              responses=errors("perm.denied", "guild.not_found"))
async def update_instance_guild(rt: RuntimeDep, guild_id: str, body: s.InstanceGuildPatch,
                                principal: PrincipalDep) -> dict:
    return await service.do_update_instance_guild(rt, principal, guild_id, body.changes())


@router.delete("/instance/guilds/{guild_id}", operation_id="deleteInstanceGuild", status_code=204,
               responses=errors("perm.denied", "auth.step_up_required", "guild.not_found"))
async def delete_instance_guild(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> Response:
    await service.do_delete_instance_guild(rt, principal, guild_id)
    return Response(status_code=204)

"""Routes of /guilds/{id}/cosmetics: parse, one service call (docs/customisation.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.multipart import multipart_file
from meadhall.api.openapi import errors, rules, with_rules
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.files.schemas import UPLOAD_ERRORS
from meadhall.files.sniff import WEB_IMAGES
from meadhall.guilds.cosmetics import schemas as s
from meadhall.guilds.cosmetics import service
from meadhall.guilds.uploads import upload_body

router = APIRouter(tags=["cosmetics"])

NO_GUILD = "guild.not_found"
COSMETIC_UPLOAD = upload_body(
    "A PNG, JPEG, WebP or GIF image, declared as such", WEB_IMAGES,
    {"kind": {"type": "string", "enum": list(s.COSMETIC_KINDS)},
     "name": {"type": "string", "minLength": 1, "maxLength": 32, "pattern": r"^\S(.*\S)?$"}},
    ["kind", "name"])


@router.get("/guilds/{guild_id}/cosmetics", response_model=s.CosmeticsResponse, responses=errors(NO_GUILD))
async def list_cosmetics(rt: RuntimeDep, guild_id: str, principal: PrincipalDep,
                         kind: Annotated[s.CosmeticKind | None, Query()] = None) -> dict:
    return await service.access_cosmetics(rt, principal, guild_id, kind)


@router.post("/guilds/{guild_id}/cosmetics", status_code=201, response_model=s.CosmeticResponse,
             dependencies=[limited("uploads")],
             openapi_extra=with_rules(COSMETIC_UPLOAD, rules({"name": "sent as a form field, not empty, a single line without control characters",
                                                          "kind": "sent as a form field, not empty"})),
             responses=errors(NO_GUILD, "perm.denied", "cosmetic.limit_reached", *UPLOAD_ERRORS))
async def create_cosmetic(request: Request, rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> dict:
    return await service.do_create_cosmetic(rt, principal, guild_id, multipart_file(request))


@router.patch("/guilds/{guild_id}/cosmetics/{cosmetic_id}", response_model=s.CosmeticResponse,
              responses=errors(NO_GUILD, "cosmetic.not_found", "perm.denied"))
async def update_cosmetic(rt: RuntimeDep, guild_id: str, cosmetic_id: str, body: s.CosmeticPatch,
                          principal: PrincipalDep) -> dict:
    return await service.do_update_cosmetic(rt, principal, guild_id, cosmetic_id, body.name)


@router.delete("/guilds/{guild_id}/cosmetics/{cosmetic_id}", status_code=204,
               responses=errors(NO_GUILD, "cosmetic.not_found", "perm.denied"))
async def delete_cosmetic(rt: RuntimeDep, guild_id: str, cosmetic_id: str, principal: PrincipalDep) -> Response:
    await service.do_delete_cosmetic(rt, principal, guild_id, cosmetic_id)
    return Response(status_code=204)

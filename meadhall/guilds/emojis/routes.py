"""Routes of /guilds/{id}/emojis: parse, one service call (docs/customisation.md)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.multipart import multipart_file
from meadhall.api.openapi import errors, rules, with_rules
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.files.schemas import UPLOAD_ERRORS
from meadhall.files.sniff import WEB_IMAGES
from meadhall.guilds.emojis import schemas as s
from meadhall.guilds.emojis import service
from meadhall.guilds.uploads import upload_body

router = APIRouter(tags=["emojis"])

NO_GUILD = "guild.not_found"
EMOJI_UPLOAD = upload_body(
    "A PNG, JPEG, WebP or GIF image, declared as such (GIF images are `animated`)", WEB_IMAGES,
    {"name": {"type": "string", "pattern": s.EMOJI_NAME_PATTERN, "description": "Unique in the server, ignoring case"}},
    ["name"])


@router.get("/guilds/{guild_id}/emojis", response_model=s.EmojisResponse, responses=errors(NO_GUILD))
async def list_emojis(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> dict:
    return await service.access_emojis(rt, principal, guild_id)


@router.post("/guilds/{guild_id}/emojis", status_code=201, response_model=s.EmojiResponse,
             dependencies=[limited("uploads")], openapi_extra=with_rules(EMOJI_UPLOAD, rules({"name": "sent as a form field, not empty"})),
             responses=errors(NO_GUILD, "perm.denied", "emoji.name_taken", "emoji.limit_reached", *UPLOAD_ERRORS))
async def create_emoji(request: Request, rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> dict:
    return await service.do_create_emoji(rt, principal, guild_id, multipart_file(request))


@router.patch("/guilds/{guild_id}/emojis/{emoji_id}", response_model=s.EmojiResponse,
              responses=errors(NO_GUILD, "emoji.not_found", "perm.denied", "emoji.name_taken"))
async def update_emoji(rt: RuntimeDep, guild_id: str, emoji_id: str, body: s.EmojiPatch,
                       principal: PrincipalDep) -> dict:
    return await service.do_update_emoji(rt, principal, guild_id, emoji_id, body.name)


@router.delete("/guilds/{guild_id}/emojis/{emoji_id}", status_code=204,
               responses=errors(NO_GUILD, "emoji.not_found", "perm.denied"))
async def delete_emoji(rt: RuntimeDep, guild_id: str, emoji_id: str, principal: PrincipalDep) -> Response:
    await service.do_delete_emoji(rt, principal, guild_id, emoji_id)
    return Response(status_code=204)

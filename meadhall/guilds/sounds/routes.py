"""Routes of /guilds/{id}/sounds: parse, one service call (docs/customisation.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.multipart import multipart_file
from meadhall.api.openapi import errors, rules, with_rules
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.files.schemas import UPLOAD_ERRORS
from meadhall.guilds.sounds import schemas as s
from meadhall.guilds.sounds import service
from meadhall.guilds.sounds.checks import SOUND_TYPES
from meadhall.guilds.uploads import upload_body

router = APIRouter(tags=["sounds"])

NO_GUILD = "guild.not_found"
SOUND_UPLOAD = upload_body(
    "An MP3, Ogg, WAV, WebM or M4A sound, declared as such", SOUND_TYPES,
    {"name": {"type": "string", "minLength": 2, "maxLength": 32, "pattern": r"^\S(.*\S)?$",
              "description": "Unique in the server among sounds of its kind, ignoring case"},
     "kind": {"type": "string", "enum": list(s.SOUND_KINDS)},
     "emoji": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": r"^\S(.*\S)?$",
               "description": "One Unicode emoji, or the `<:name:id>` token of a custom emoji of this server"},
     "palette_event": {"type": "string", "enum": list(s.PALETTE_EVENTS),
                       "description": "Interface sounds: the interface event the sound replaces"}},
    ["name", "kind"])
PALETTE_RULE = {"palette_event": "required for interface sounds, absent for soundboard sounds",
                "name": "sent as a form field, not empty, a single line without control characters",
                "kind": "sent as a form field, not empty",
                "emoji": "one Unicode emoji, or the `<:name:id>` token of a custom emoji of this server"}


@router.get("/guilds/{guild_id}/sounds", response_model=s.SoundsResponse, responses=errors(NO_GUILD))
async def list_sounds(rt: RuntimeDep, guild_id: str, principal: PrincipalDep,
                      kind: Annotated[s.SoundKind | None, Query()] = None) -> dict:
    return await service.access_sounds(rt, principal, guild_id, kind)


@router.post("/guilds/{guild_id}/sounds", status_code=201, response_model=s.SoundResponse,
             dependencies=[limited("uploads")], openapi_extra=with_rules(SOUND_UPLOAD, rules(PALETTE_RULE)),
             responses=errors(NO_GUILD, "perm.denied", "sound.name_taken", "sound.limit_reached",
                              "sound.palette_event_taken", *UPLOAD_ERRORS))
async def create_sound(request: Request, rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> dict:
    return await service.do_create_sound(rt, principal, guild_id, multipart_file(request))


@router.patch("/guilds/{guild_id}/sounds/{sound_id}", response_model=s.SoundResponse,
              openapi_extra=rules({"palette_event": "only interface sounds have one",
                                   "emoji": "one Unicode emoji, or the `<:name:id>` token of a custom emoji of "
                                            "this server"}),
              responses=errors(NO_GUILD, "sound.not_found", "perm.denied", "sound.name_taken",
                               "sound.palette_event_taken"))
async def update_sound(rt: RuntimeDep, guild_id: str, sound_id: str, body: s.SoundPatch,
                       principal: PrincipalDep) -> dict:
    return await service.do_update_sound(rt, principal, guild_id, sound_id, body.changes())


@router.delete("/guilds/{guild_id}/sounds/{sound_id}", status_code=204,
               responses=errors(NO_GUILD, "sound.not_found", "perm.denied"))
async def delete_sound(rt: RuntimeDep, guild_id: str, sound_id: str, principal: PrincipalDep) -> Response:
    await service.do_delete_sound(rt, principal, guild_id, sound_id)
    return Response(status_code=204)

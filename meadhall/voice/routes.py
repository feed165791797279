"""Routes of the voice rooms (docs/voice.md): join and leave, voice states and their moderation, soundboard
play, and the media server's webhook: parse, one service call."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors, rules, with_rules
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.voice import moderation, service, sounds, webhook
from meadhall.voice import schemas as s

router = APIRouter(tags=["voice"])

_OFF = "voice.disabled"
_ROOM = ("channel.not_found", "channel.wrong_type")
_STATE = ("guild.not_found", "voice_state.not_found", "perm.denied", _OFF)
_VOICE_ROOM = rules({"channel_id": "a voice room; a text room or category you can view answers this"},
                    code="channel.wrong_type")


@router.post("/channels/{channel_id}/voice/join", response_model=s.VoiceJoinResponse, dependencies=[limited("voice")],
             openapi_extra=_VOICE_ROOM, responses=errors(*_ROOM, _OFF, "perm.denied", "voice.channel_full"))
async def join_voice(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict:
    return await service.do_join_voice(rt, principal, channel_id)


@router.post("/channels/{channel_id}/voice/leave", status_code=204, dependencies=[limited("voice")],
             responses=errors(_OFF))
async def leave_voice(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> Response:
    await service.do_leave_voice(rt, principal, channel_id)
    return Response(status_code=204)


@router.get("/guilds/{guild_id}/voice-states", response_model=s.VoiceStatesResponse,
            responses=errors("guild.not_found", _OFF))
async def list_voice_states(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> dict:
    return await service.access_voice_states(rt, principal, guild_id)


@router.patch("/guilds/{guild_id}/voice-states/@me", response_model=s.VoiceStateResponse, responses=errors(*_STATE))
async def update_own_voice_state(rt: RuntimeDep, guild_id: str, body: s.OwnVoiceFlags, principal: PrincipalDep
                                 ) -> dict:
    return await service.do_update_own_flags(rt, principal, guild_id, body.changes())


@router.patch("/guilds/{guild_id}/voice-states/{user_id}", response_model=s.VoiceStateResponse,
              responses=errors(*_STATE, "member.not_found"))
async def update_voice_state(rt: RuntimeDep, guild_id: str, user_id: str, body: s.ModeratorVoiceFlags,
                             principal: PrincipalDep) -> dict:
    return await moderation.do_moderate_voice_state(rt, principal, guild_id, user_id, body.changes())


@router.post("/guilds/{guild_id}/voice-states/{user_id}/move", response_model=s.VoiceStateResponse,
             openapi_extra=_VOICE_ROOM, responses=errors(*_STATE, *_ROOM, "member.not_found"))
async def move_voice_state(rt: RuntimeDep, guild_id: str, user_id: str, body: s.VoiceMove,
                           principal: PrincipalDep) -> dict:
    return await moderation.do_move_voice_state(rt, principal, guild_id, user_id, body.channel_id)


@router.delete("/guilds/{guild_id}/voice-states/{user_id}", status_code=204,
               responses=errors(*_STATE, "member.not_found"))
async def disconnect_voice_state(rt: RuntimeDep, guild_id: str, user_id: str, principal: PrincipalDep) -> Response:
    await moderation.do_disconnect_voice_state(rt, principal, guild_id, user_id)
    return Response(status_code=204)


@router.post("/guilds/{guild_id}/sounds/{sound_id}/play", status_code=204, dependencies=[limited("sounds.play")],
             openapi_extra=rules({"sound_id": "a soundboard sound; interface sounds are not played"}),
             responses=errors("guild.not_found", "sound.not_found", "perm.denied", "voice.not_connected", _OFF))
async def play_sound(rt: RuntimeDep, guild_id: str, sound_id: str, principal: PrincipalDep) -> Response:
    await sounds.do_play_sound(rt, principal, guild_id, sound_id)
    return Response(status_code=204)


_WEBHOOK_BODY = {
    "requestBody": {"required": True, "content": {"application/webhook+json": {"schema": {
        "type": "object", "description": "a LiveKit webhook event: `{id, event, room: {name}, participant?: "
                                         "{identity}, createdAt}`, signed in the `Authorization` header"}}}},
    "parameters": [{"name": "Authorization", "in": "header", "required": False, "schema": {"type": "string"},
                    "description": "the media server's JWT (bare or after `Bearer `): `iss` the API key, HS256 "
                                   "with the API secret, claim `sha256` the base64 SHA-256 of the body; "
                                   "without it 401, except that 403 `voice.disabled` comes first when voice is off"}],
}


@router.post("/media/webhook", response_model=s.MediaWebhookAnswer,
             openapi_extra=with_rules(_WEBHOOK_BODY, rules({
                 "body": "a correctly signed body must be a media-server event in JSON",
                 "id": "required", "event": "required"})),
             responses=errors("auth.unauthorized", "validation.failed", _OFF))
async def receive_media_webhook(request: Request, rt: RuntimeDep) -> dict:
    await webhook.do_media_webhook(rt, await request.body(), request.headers.get("authorization"))
    return {}

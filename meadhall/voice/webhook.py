"""The media server's webhooks (docs/voice.md, "Webhooks"; OpenAPI: receiveMediaWebhook): signed by the media
server with our API secret (a JWT whose `sha256` claim is the body's digest), verified with livekit-api's
receiver, journaled by event id so that a repeat has no effect.

`participant_left` clears the matching voice state (or takes the user out of the conversation's call);
`room_finished` clears the whole room.
"""

from __future__ import annotations

import re

import structlog
from livekit.api import TokenVerifier, WebhookReceiver

from meadhall.core.errors import AppError
from meadhall.runtime import Runtime
from meadhall.social.calls.service import do_leave_call_room
from meadhall.voice import queries
from meadhall.voice import state as vs
from meadhall.voice.removal import clear_state
from meadhall.voice.store import VoiceState, voice_store

log = structlog.get_logger("meadhall.voice.webhook")

GUILD_ROOM = re.compile(r"^guild_(\d+)_channel_(\d+)$")
CALL_ROOM = re.compile(r"^dm_(\d+)$")
# `createdAt` has whole seconds and the clocks of two machines differ a little.
REJOIN_MARGIN = 5.0


def _verified(rt: Runtime, body: bytes, authorization: str | None) -> object:
    token = (authorization or "").strip()
    if token[:7].lower() == "bearer ":
        token = token[7:].strip()
    if not token:
        raise AppError("auth.unauthorized", "The media-server signature is missing")
    receiver = WebhookReceiver(TokenVerifier(rt.settings.MEDIA_API_KEY, rt.settings.MEDIA_API_SECRET))
    try:
        return receiver.receive(body.decode("utf-8"), token)
    except Exception:
        raise AppError("auth.unauthorized", "The media-server signature is not valid") from None


async def do_media_webhook(rt: Runtime, body: bytes, authorization: str | None) -> None:
    """Verify, apply once, journal. 403 `voice.disabled` before any signature check when voice is off."""
    vs.check_voice_enabled(rt)
    event = _verified(rt, body, authorization)
    event_id = str(getattr(event, "id", "") or "")
    kind = str(getattr(event, "event", ""))
    room = str(event.room.name) if event.HasField("room") else None  # type: ignore[attr-defined]
    if event_id:
        async with rt.read() as uow:
            if await queries.select_webhook_event(uow.conn, event_id):
                return
    if room:
        identity = event.participant.identity if event.HasField("participant") else None  # type: ignore[attr-defined]
        created = float(getattr(event, "created_at", 0) or 0)
        if kind == "participant_left" and identity:
            await _participant_left(rt, room, identity, created)
        elif kind == "room_finished":
            await _room_finished(rt, room)
    if event_id:
        async with rt.uow() as uow:
            await queries.insert_webhook_event(uow.conn, event_id, kind[:64], room and room[:128], uow.now)


async def _participant_left(rt: Runtime, room: str, identity: str, created: float) -> None:
    if not identity.isdigit():
        return
    user_id = int(identity)
    if match := CALL_ROOM.match(room):
        await do_leave_call_room(rt, int(match.group(1)), user_id)
        return
    if not GUILD_ROOM.match(room):
        return
    _, mine = await vs.current(rt, user_id)
    # A state made after the media server saw the user go (they joined again since) is not this one.
    if mine is not None and vs.room_of(mine) == room and not (created and mine.joined_ts > created + REJOIN_MARGIN):
        await clear_state(rt, mine)


async def _room_finished(rt: Runtime, room: str) -> None:
    if match := CALL_ROOM.match(room):
        await do_leave_call_room(rt, int(match.group(1)), None)
        return
    if not (match := GUILD_ROOM.match(room)):
        return
    guild_id, channel_id = match.group(1), match.group(2)
    for raw in await voice_store(rt).in_guild(int(guild_id)):
        state = VoiceState.decode(raw)
        if state.channel_id == channel_id:
            await clear_state(rt, state)

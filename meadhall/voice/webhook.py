"""The media server's webhooks (docs/voice.md, "Webhooks"; OpenAPI: receiveMediaWebhook): signed by the media
server with our API secret (a JWT whose `sha256` claim is the body's digest), verified with livekit-api's
token verifier, journaled by event id so that a repeat has no effect.

`participant_joined` removes whoever may not be in that room and applies the restrictions in force to who may
(voice/admission.py); `participant_left` clears the matching voice state (or takes the user out of the
conversation's call); `room_finished` clears the whole room.

A body that is correctly signed but not an event (not JSON, no `id` or `event`) is the media server's bug,
not a forgery: 422, so that it shows as such in the media server's logs, not as a signature problem.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import TYPE_CHECKING

import structlog

from meadhall.core.errors import AppError, validation_error
from meadhall.core.text import check_single_line
from meadhall.integrations.livekit import check_voice_enabled
from meadhall.runtime import Runtime
from meadhall.social.calls.service import do_leave_call_room
from meadhall.voice import queries
from meadhall.voice import state as vs
from meadhall.voice.admission import CALL_ROOM, GUILD_ROOM, admit
from meadhall.voice.removal import clear_state
from meadhall.voice.store import VoiceState, voice_store

if TYPE_CHECKING:
    from livekit.protocol.webhook import WebhookEvent

log = structlog.get_logger("meadhall.voice.webhook")

# `createdAt` has whole seconds and the clocks of two machines differ a little.
REJOIN_MARGIN = 5.0
EVENT_ID_LENGTH = 128


def _check_signature(rt: Runtime, body: bytes, authorization: str | None) -> None:
    """401 unless the JWT is ours (HS256 with the secret, `iss` the key, not expired) and its `sha256` claim is
    the body's digest."""
    token = (authorization or "").strip()
    if token[:7].lower() == "bearer ":
        token = token[7:].strip()
    if not token:
        raise AppError("auth.unauthorized", "The media-server signature is missing")
    from livekit.api import TokenVerifier  # with the first webhook: livekit-api is some 20 MiB

    verifier = TokenVerifier(rt.settings.MEDIA_API_KEY, rt.settings.MEDIA_API_SECRET)
    try:
        claimed = base64.b64decode(verifier.verify(token).sha256 or "", validate=True)
    except Exception:  # livekit-api raises its own and PyJWT's errors, binascii a malformed digest
        raise AppError("auth.unauthorized", "The media-server signature is not valid") from None
    if not claimed or not hmac.compare_digest(claimed, hashlib.sha256(body).digest()):
        raise AppError("auth.unauthorized", "The media-server signature is not valid")


def _event(body: bytes) -> WebhookEvent:
    """The signed body as an event; 422 when it is none (not JSON, not an event, no `id` or `event`)."""
    from google.protobuf.json_format import ParseDict
    from livekit.protocol.webhook import WebhookEvent

    try:
        document = json.loads(body)
        if not isinstance(document, dict):
            raise ValueError("not a JSON object")
        event = ParseDict(document, WebhookEvent(), ignore_unknown_fields=True)
    except Exception:  # not JSON, or fields of the wrong kind (json_format.ParseError)
        raise validation_error("body", "is not a media-server event (a JSON object)") from None
    for field in ("id", "event"):
        if not getattr(event, field):
            raise validation_error(field, "is required")
    if len(event.id) > EVENT_ID_LENGTH:  # the journal's column; the media server's ids are short
        raise validation_error("id", f"is longer than {EVENT_ID_LENGTH} characters")
    # The journal stores these; PostgreSQL refuses a text holding NUL, so it is a 422 here, never a 500.
    for field, value in (("id", event.id), ("event", event.event), ("room", event.room.name)):
        try:
            check_single_line(value)
        except ValueError as error:
            raise validation_error(field, str(error)) from None
    return event


async def do_media_webhook(rt: Runtime, body: bytes, authorization: str | None) -> None:
    """Verify, apply once, journal. 403 `voice.disabled` before any signature check when voice is off."""
    check_voice_enabled(rt.settings)
    _check_signature(rt, body, authorization)
    event = _event(body)
    event_id, kind = str(event.id), str(event.event)
    room = str(event.room.name) if event.HasField("room") else None
    async with rt.read() as uow:
        if await queries.select_webhook_event(uow.conn, event_id):
            return
    if room:
        identity = event.participant.identity if event.HasField("participant") else None
        created = float(event.created_at or 0)
        if kind == "participant_joined" and identity:
            await admit(rt, room, identity)
        elif kind == "participant_left" and identity:
            await _participant_left(rt, room, identity, created)
        elif kind == "room_finished":
            await _room_finished(rt, room)
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

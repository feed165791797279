"""The media server's administration side (docs/voice.md): LiveKit's RoomService at `MEDIA_API_URL`, through
livekit-api's client, which signs each call with a token carrying `roomAdmin` for the room concerned.

A media server that is down or refuses must not fail the request that changed a voice state: every call
here logs and answers False instead of raising; the reconciliation job (voice/reconcile.py) applies the
state later. Calls are short (a few seconds at most) so a hung server does not hold a request.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog

from meadhall.config import Settings
from meadhall.integrations.livekit import ALL_SOURCES, CAMERA, MICROPHONE, SCREEN_SOURCES

log = structlog.get_logger("meadhall.voice.media")

TIMEOUT_SECONDS = 3


def _lk() -> Any:
    """livekit-api, imported with the first call to a media server: it brings protobuf and aiohttp (some
    20 MiB), which a node without voice, or one that has not called it yet, does without."""
    from livekit import api

    return api


@functools.cache
def _sources() -> dict[str, Any]:
    """Our source names -> the media server's TrackSource values (a constant table, built on first use)."""
    lk = _lk()
    return {MICROPHONE: lk.TrackSource.MICROPHONE, CAMERA: lk.TrackSource.CAMERA,
            SCREEN_SOURCES[0]: lk.TrackSource.SCREEN_SHARE, SCREEN_SOURCES[1]: lk.TrackSource.SCREEN_SHARE_AUDIO}


@functools.cache
def _names() -> dict[int, str]:
    return {int(v): k for k, v in _sources().items()}


@dataclass(frozen=True)
class Participant:
    """Someone in a media-server room and what the media server lets them do now."""

    identity: str
    sources: frozenset[str]  # what they may publish
    subscribes: bool  # whether they hear and see the others

    def restricted_as(self, sources: tuple[str, ...], *, deafened: bool) -> bool:
        return self.sources == frozenset(sources) and self.subscribes is not deafened


def _participant(info: Any) -> Participant:
    """A participant of a listing. The media server reads an empty source list with `canPublish` as "every
    source"; a participant listed without permissions is taken to hold the widest (it is restricted again
    if it should not)."""
    if not info.HasField("permission"):
        return Participant(info.identity, frozenset(ALL_SOURCES), True)
    perm = info.permission
    names = _names()
    named = frozenset(names[int(s)] for s in perm.can_publish_sources if int(s) in names)
    sources = (named or frozenset(ALL_SOURCES)) if perm.can_publish else frozenset()
    return Participant(info.identity, sources, bool(perm.can_subscribe))


class MediaServer:
    """One administration session per use: `async with MediaServer(settings) as media: ...`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._api: Any = None

    async def __aenter__(self) -> MediaServer:
        if self.settings.voice_enabled:
            import aiohttp

            self._api = _lk().LiveKitAPI(url=self.settings.MEDIA_API_URL, api_key=self.settings.MEDIA_API_KEY,
                                         api_secret=self.settings.MEDIA_API_SECRET,
                                         timeout=aiohttp.ClientTimeout(total=TIMEOUT_SECONDS), failover=False)
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._api is not None:
            await self._api.aclose()

    async def _call(self, what: str, room: str, fn: Callable[[Any], Awaitable[Any]]) -> Any:
        if self._api is None:
            return None
        lk = _lk()
        try:
            return await fn(self._api.room)
        except lk.ServerError as err:
            # A participant who already left is what we wanted.
            if err.code == lk.ServerErrorCode.NOT_FOUND:
                return None
            log.warning("media server refused", call=what, room=room, code=err.code, error=err.message)
        except Exception as err:
            log.warning("media server unreachable", call=what, room=room, error=repr(err))
        return False

    async def remove(self, room: str, user_id: int) -> bool:
        done = await self._call("RemoveParticipant", room, lambda rs: rs.remove_participant(
            _lk().RoomParticipantIdentity(room=room, identity=str(user_id))))
        return done is not False

    async def restrict(self, room: str, user_id: int, sources: tuple[str, ...], *, deafened: bool) -> bool:
        """What the participant may publish and whether they hear: a server mute takes the microphone out of
        `sources` (LiveKit unpublishes it), a server deafen stops their subscriptions."""
        lk = _lk()
        permission = lk.ParticipantPermission(
            can_subscribe=not deafened, can_publish=bool(sources), can_publish_data=True,
            can_publish_sources=[_sources()[s] for s in sources])
        done = await self._call("UpdateParticipant", room, lambda rs: rs.update_participant(
            lk.UpdateParticipantRequest(room=room, identity=str(user_id), permission=permission)))
        return done is not False

    async def move(self, room: str, user_id: int, destination: str) -> bool:
        """MoveParticipant where the server offers it; else the participant is removed from the old room and
        their client joins the new one with a fresh token (docs/voice.md, "Moves")."""
        done = await self._call("MoveParticipant", room, lambda rs: rs.move_participant(
            _lk().MoveParticipantRequest(room=room, identity=str(user_id), destination_room=destination)))
        if done is False:
            return await self.remove(room, user_id)
        return True

    async def participants(self, room: str) -> list[Participant] | None:
        """Who is in the room, with what they may do; None when the server could not be asked."""
        found = await self._call("ListParticipants", room, lambda rs: rs.list_participants(
            _lk().ListParticipantsRequest(room=room)))
        if found is False:
            return None
        return [] if found is None else [_participant(p) for p in found.participants]

    async def rooms(self) -> list[str] | None:
        found = await self._call("ListRooms", "*", lambda rs: rs.list_rooms(_lk().ListRoomsRequest()))
        if found is False:
            return None
        return [] if found is None else [r.name for r in found.rooms]

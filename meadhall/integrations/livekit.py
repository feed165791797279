"""Media-server (LiveKit) access tokens and room names (docs/social.md, "Calls").

A token is an HS256 JWT signed with `MEDIA_API_SECRET` (`iss` = `MEDIA_API_KEY`, `sub` = the user id,
`name` = the display name), valid for 10 minutes, granting one room. Calls in direct conversations may publish
every source; guild voice rooms narrow the sources to what the member's permissions allow, so the grant is a
value the caller builds, not something this module decides.

The lifetime is short because a token cannot be revoked (docs/voice.md, "Who may be in a media room"): the
media server refreshes the token of a connected participant, so only a later reconnection needs a new one,
and a removed user cannot come back with an old one for long.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from meadhall.config import Settings
from meadhall.core.errors import AppError
from meadhall.core.limits import MEDIA_TOKEN_MINUTES

TOKEN_LIFETIME = timedelta(minutes=MEDIA_TOKEN_MINUTES)
# Source names of the media server: `microphone` needs SPEAK, `camera` VIDEO, the two screen sources STREAM.
MICROPHONE = "microphone"
CAMERA = "camera"
SCREEN_SOURCES = ("screen_share", "screen_share_audio")
ALL_SOURCES: tuple[str, ...] = (MICROPHONE, CAMERA, *SCREEN_SOURCES)


@dataclass(frozen=True)
class MediaGrant:
    """What one token allows in one room; the metadata flags travel to the other participants' clients."""

    room: str
    sources: tuple[str, ...] = ALL_SOURCES
    priority_speaker: bool = False
    push_to_talk_required: bool = False


def call_room(channel_id: int) -> str:
    """The media-server room of a direct conversation's call."""
    return f"dm_{channel_id}"


def guild_voice_room(guild_id: int, channel_id: int) -> str:
    """The media-server room of a guild voice room."""
    return f"guild_{guild_id}_channel_{channel_id}"


def check_voice_enabled(settings: Settings) -> None:
    """Every call and voice operation answers this first when no media server is configured."""
    if not settings.voice_enabled:
        raise AppError("voice.disabled")


def media_token(settings: Settings, user_id: int, display_name: str, grant: MediaGrant, now: datetime) -> str:
    """A signed token for `grant.room`. Voice must be enabled (`settings.voice_enabled`): callers answer
    403 `voice.disabled` before asking for one."""
    # livekit-api brings protobuf and aiohttp (some 20 MiB): loaded with the first token, not at start.
    from livekit.api import AccessToken, VideoGrants

    key, secret = settings.MEDIA_API_KEY, settings.MEDIA_API_SECRET
    if not key or not secret:
        raise RuntimeError("voice is disabled: MEDIA_API_KEY and MEDIA_API_SECRET are not set")
    video = VideoGrants(room_join=True, room=grant.room, can_publish=bool(grant.sources), can_subscribe=True,
                        can_publish_data=True, can_publish_sources=list(grant.sources))
    metadata = json.dumps({"priority_speaker": grant.priority_speaker,
                           "push_to_talk_required": grant.push_to_talk_required})
    # AccessToken reads the wall clock for `exp`; the service's clock (movable in tests) decides the expiry,
    # so the lifetime handed over is what remains from the wall clock's now to that expiry.
    expires_at = now + TOKEN_LIFETIME
    token = (AccessToken(key, secret).with_identity(str(user_id)).with_name(display_name).with_grants(video)
             .with_metadata(metadata).with_ttl(expires_at - datetime.now(UTC)))
    return token.to_jwt()

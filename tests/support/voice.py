"""Voice rooms for the voice tests: rooms made through the room routes, the voice operations through HTTP,
the media-server token decoded, and the voice store read as stored."""

from __future__ import annotations

import uuid
from typing import Any

import jwt

from meadhall.voice.store import VoiceState, voice_store
from tests.support.guilds import room
from tests.support.livekit_standin import signed_webhook, webhook_event

MEDIA_KEY = "test-media-key"
MEDIA_SECRET = "test-media-secret-0123456789abcdef0123456789"


def voice_settings(media_url: str) -> dict[str, Any]:
    """settings_overrides of a module whose voice operations reach the stand-in at `media_url`."""
    return {"MEDIA_API_KEY": MEDIA_KEY, "MEDIA_API_SECRET": MEDIA_SECRET, "MEDIA_API_URL": media_url}


async def voice_room(client: Any, owner: Any, guild_id: str, name: str = "Lounge", **extra: Any) -> str:
    return str((await room(client, owner, guild_id, type="voice", name=name, **extra))["id"])


async def join(api: Any, account: Any, channel_id: str, *, expect: int = 200) -> Any:
    return await api.post(f"/channels/{channel_id}/voice/join", account, expect=expect)


async def leave(api: Any, account: Any, channel_id: str, *, expect: int = 204) -> Any:
    return await api.post(f"/channels/{channel_id}/voice/leave", account, expect=expect)


async def states(api: Any, account: Any, guild_id: str, *, expect: int = 200) -> Any:
    body = await api.get(f"/guilds/{guild_id}/voice-states", account, expect=expect)
    return body["voice_states"] if expect == 200 else body


async def own_flags(api: Any, account: Any, guild_id: str, *, expect: int = 200, **flags: Any) -> Any:
    return await api.patch(f"/guilds/{guild_id}/voice-states/@me", account, json=flags, expect=expect)


async def moderate(api: Any, actor: Any, guild_id: str, target: Any, *, expect: int = 200, **flags: Any) -> Any:
    return await api.patch(f"/guilds/{guild_id}/voice-states/{target.id}", actor, json=flags, expect=expect)


async def move(api: Any, actor: Any, guild_id: str, target: Any, channel_id: str, *, expect: int = 200) -> Any:
    return await api.post(f"/guilds/{guild_id}/voice-states/{target.id}/move", actor,
                          json={"channel_id": channel_id}, expect=expect)


async def disconnect(api: Any, actor: Any, guild_id: str, target: Any, *, expect: int = 204) -> Any:
    return await api.delete(f"/guilds/{guild_id}/voice-states/{target.id}", actor, expect=expect)


def claims(token: str, secret: str = MEDIA_SECRET) -> dict[str, Any]:
    """The media-server token's claims, its HS256 signature and expiry verified."""
    return jwt.decode(token, secret, algorithms=["HS256"], options={"verify_nbf": False})


async def stored(rt: Any, account: Any) -> VoiceState | None:
    raw = await voice_store(rt).get(int(account.id))
    return None if raw is None else VoiceState.decode(raw)


def room_name(guild_id: str, channel_id: str) -> str:
    return f"guild_{guild_id}_channel_{channel_id}"


async def media_event(client: Any, kind: str, room: str, identity: str | None = None) -> Any:
    """The media server reports `kind` (`participant_joined`, ...) in `room`, signed as it signs webhooks;
    the answer."""
    body, token = signed_webhook(MEDIA_KEY, MEDIA_SECRET, webhook_event(f"EV_{uuid.uuid4().hex}", kind, room, identity))
    return await client.post("/api/v1/media/webhook", content=body,
                             headers={"Authorization": token, "Content-Type": "application/webhook+json"})

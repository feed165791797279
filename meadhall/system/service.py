"""Service information: readiness checks and the meta payload (OpenAPI: getReadiness, getMeta)."""

from __future__ import annotations

from typing import Any

from meadhall import __version__
from meadhall.core import limits
from meadhall.files.limits import media_limits
from meadhall.runtime import Runtime


async def readiness(rt: Runtime) -> tuple[bool, dict[str, str]]:
    checks: dict[str, str] = {"database": "ok" if await rt.check_database() else "error"}
    redis_ok = await rt.check_redis()
    checks["redis"] = "disabled" if redis_ok is None else ("ok" if redis_ok else "error")
    return all(v != "error" for v in checks.values()), checks


async def meta(rt: Runtime) -> dict[str, Any]:
    s = rt.settings
    async with rt.read() as uow:
        media = await media_limits(uow.conn)  # the instance settings over the defaults (docs/reference/limits.md)
    body: dict[str, Any] = {
        "version": __version__,
        "features": {
            "registration_enabled": s.REGISTRATION_ENABLED,
            "voice_enabled": s.voice_enabled,
            "web_push_enabled": s.web_push_enabled,
            "unfurl_enabled": s.UNFURL_ENABLED,
            "passkeys_enabled": s.passkeys_enabled,
        },
        "limits": {
            "message_length": limits.MESSAGE_LENGTH,
            "max_upload_size": s.MAX_UPLOAD_SIZE,
            "attachments_per_message": limits.ATTACHMENTS_PER_MESSAGE,
            **media,
            "emojis_per_guild": limits.EMOJIS_PER_GUILD,
            "soundboard_sounds_per_guild": limits.SOUNDBOARD_SOUNDS_PER_GUILD,
            "interface_sounds_per_guild": limits.INTERFACE_SOUNDS_PER_GUILD,
            "group_dm_min_invited": limits.GROUP_DM_MIN_INVITED,
            "group_dm_max_invited": limits.GROUP_DM_MAX_INVITED,
            "password_min_length": limits.PASSWORD_MIN_LENGTH,
            "edit_window_seconds": limits.EDIT_WINDOW_SECONDS,
        },
    }
    if s.voice_enabled:
        body["voice_url"] = s.MEDIA_PUBLIC_URL
    return body

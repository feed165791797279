"""An instance-banned account leaves every voice context (docs/admin.md, "Users"): its guild voice room
(VOICE_STATE_UPDATE with `channel_id` null to the guild's members, and the media server's removal) and the
direct-conversation calls it is joined in (the call's usual transitions, and the call room's removal on the
media server). Run after the ban committed; the voice reconciliation job clears what a failure here left."""

from __future__ import annotations

import structlog

from meadhall.integrations.livekit import call_room
from meadhall.runtime import Runtime
from meadhall.social.calls.service import do_leave_call_room, select_joined_calls
from meadhall.voice.media import MediaServer
from meadhall.voice.service import leave_voice_of

log = structlog.get_logger("meadhall.admin")


async def remove_from_voice_and_calls(rt: Runtime, user_id: int) -> None:
    # The ban has committed: a voice store or media server outage must not turn it into an error answer.
    try:
        if rt.settings.voice_enabled:
            await leave_voice_of(rt, user_id)
        async with rt.read() as uow:
            joined = await select_joined_calls(uow.conn, user_id)
        for _, channel_id in joined:
            await do_leave_call_room(rt, channel_id, user_id)
        if joined and rt.settings.voice_enabled:
            async with MediaServer(rt.settings) as media:
                for _, channel_id in joined:
                    await media.remove(call_room(channel_id), user_id)
    except Exception:
        log.exception("taking a banned account out of voice failed", user_id=user_id)

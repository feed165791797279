"""What the voice rooms add when the app is built (`create_app`): the reconciliation jobs, and callbacks on the
hooks of the layers below (guild changes that may take someone out of voice; calls, which take the user out of
their voice room, and whose leavers leave the call's media-server room)."""

from __future__ import annotations

import functools

import structlog

from meadhall.guilds.hooks import access_change
from meadhall.integrations.livekit import call_room
from meadhall.runtime import Runtime
from meadhall.social.calls.hooks import voice_context_taken
from meadhall.social.calls.room_exit import call_room_exit
from meadhall.voice.media import MediaServer
from meadhall.voice.reconcile import add_voice_jobs
from meadhall.voice.removal import revalidate_guild
from meadhall.voice.service import leave_voice_of

log = structlog.get_logger("meadhall.voice")


async def _access_changed(rt: Runtime, guild_id: int) -> None:
    # The guild change has committed: a store outage must not turn it into an error answer. The
    # reconciliation job clears what was missed.
    try:
        await revalidate_guild(rt, guild_id)
    except Exception:
        log.exception("voice revalidation failed", guild_id=guild_id)


async def _in_a_call(rt: Runtime, user_id: int) -> None:
    if not rt.settings.voice_enabled:
        return
    try:
        await leave_voice_of(rt, user_id)
    except Exception:
        log.exception("leaving voice for a call failed", user_id=user_id)


async def _out_of_call_room(rt: Runtime, channel_id: int, user_id: int) -> None:
    """The user left the conversation's call: out of its media-server room too. A media server that is down
    fails nothing (MediaServer logs); the reconciliation job removes them later."""
    if not rt.settings.voice_enabled:
        return
    try:  # the call change has committed: nothing here may turn it into an error answer
        async with MediaServer(rt.settings) as media:
            await media.remove(call_room(channel_id), user_id)
    except Exception:
        log.exception("leaving a call's media-server room failed", channel_id=channel_id, user_id=user_id)


def setup(rt: Runtime) -> None:
    access_change.add("voice", _access_changed)
    voice_context_taken.add("voice", _in_a_call)
    call_room_exit.add("voice", functools.partial(_out_of_call_room, rt))
    add_voice_jobs(rt)

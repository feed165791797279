"""Wire the voice rooms into an app: the reconciliation jobs and the hooks of the layers below (guild changes
that may take someone out of voice; calls, which take the user out of their voice room)."""

from __future__ import annotations

import structlog

from meadhall.guilds.hooks import on_access_change
from meadhall.runtime import Runtime
from meadhall.social.calls.hooks import on_voice_context_taken
from meadhall.voice.reconcile import install_voice_jobs
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


def install_voice(rt: Runtime) -> None:
    on_access_change("voice", _access_changed)
    on_voice_context_taken("voice", _in_a_call)
    install_voice_jobs(rt)

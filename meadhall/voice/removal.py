"""Who may no longer be in a guild's voice rooms leaves them (docs/voice.md, "Removal"): a member who left, was
kicked or banned, is timed out (a timeout keeps only viewing), lost CONNECT_VOICE or VIEW_CHANNEL, an
instance-banned or deleted account, a deleted room or guild. Each such state is cleared (VOICE_STATE_UPDATE
with `channel_id` null) and the participant removed on the media server.

Run after every guild change that may cause it (the guilds' access hook) and by the reconciliation job for
changes made elsewhere; clearing is a compare-and-set, so two nodes doing it at once clear a state once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from meadhall.core import permissions as perms
from meadhall.guilds.rooms import queries as room_queries
from meadhall.realtime.guild_state import GuildState
from meadhall.runtime import Runtime
from meadhall.voice import queries
from meadhall.voice import state as vs
from meadhall.voice.service import finish_removal
from meadhall.voice.store import VoiceState, voice_store

NEEDED = perms.P.VIEW_CHANNEL | perms.P.CONNECT_VOICE


def _allowed(guild: GuildState | None, room: Mapping[str, Any] | None, barred: set[int], state: VoiceState,
             now: Any) -> bool:
    """Whether the state's user may be in its room: a voice room of the guild, an account neither banned nor
    deleted, VIEW_CHANNEL and CONNECT_VOICE there."""
    return (guild is not None and room is not None and room["type"] == "voice" and int(state.user_id) not in barred
            and vs.mask_in(guild, int(state.user_id), int(state.channel_id), now) & NEEDED == NEEDED)


async def unwelcome_states(rt: Runtime, guild_id: int) -> list[VoiceState]:
    """The guild's voice states whose user may not be there any more."""
    raws = await voice_store(rt).in_guild(guild_id)
    if not raws:
        return []
    states = [VoiceState.decode(r) for r in raws]
    async with rt.read() as uow:
        guild = await vs.guild_state(uow.conn, guild_id)
        rooms = {} if guild is None else {r["id"]: r for r in await room_queries.select_channels(uow.conn, guild_id)}
        barred = await queries.select_barred_users(uow.conn, [int(s.user_id) for s in states])
        now = uow.now
    return [s for s in states if not _allowed(guild, rooms.get(int(s.channel_id)), barred, s, now)]


async def still_allowed(rt: Runtime, state: VoiceState) -> bool:
    """One state's check (a participant connecting to the media server), with the rules above."""
    async with rt.read() as uow:
        guild = await vs.guild_state(uow.conn, int(state.guild_id))
        room = await room_queries.select_guild_channel(uow.conn, int(state.guild_id), int(state.channel_id))
        barred = await queries.select_barred_users(uow.conn, [int(state.user_id)])
        return _allowed(guild, room, barred, state, uow.now)


async def clear_state(rt: Runtime, state: VoiceState) -> bool:
    """Clear this very state (not one the user has since moved to); whether this call cleared it."""
    outcome = await voice_store(rt).cas(int(state.user_id), state.encode(), None)
    if outcome != "ok":
        return False
    await finish_removal(rt, state)
    return True


async def revalidate_guild(rt: Runtime, guild_id: int) -> int:
    """Clear the states that are no longer allowed; how many were cleared."""
    if not rt.settings.voice_enabled:
        return 0
    cleared = 0
    for state in await unwelcome_states(rt, guild_id):
        cleared += await clear_state(rt, state)
    return cleared

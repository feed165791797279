"""The reconciliation job (docs/voice.md, "Reconciliation"), run by one node per period (the jobs' claim in the
shared store): voice states and the media server's participant lists are brought to agree.

1. States whose user may no longer be there (lost permission, left the guild, banned) are cleared, as after
   any guild change (voice/removal.py): changes made by another process are caught here.
2. A state whose user has been missing from the media server's room for longer than the grace period
   (`VOICE_GHOST_SECONDS`, counted from when this job first saw them missing, or from the join if later) is
   a ghost (a crashed client, a lost node): it is cleared.
3. Anyone in a guild voice room on the media server without a voice state for it (left, moved, removed while
   the media server was down) is removed there.
4. Whoever the media server lets publish or hear more or less than the restrictions in force allow (a
   server mute, a server deafen, the sources their permissions allow now) gets them applied again: a change
   the media server missed while down, or a reconnection with a token signed before it.
5. Anyone in a conversation call's room who is not a joined participant of its ongoing call (left, removed
   from the group, the call ended, back with an old token) is removed there.

A media server that cannot be asked changes nothing; the next run tries again.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from meadhall.core.limits import MEDIA_WEBHOOK_JOURNAL_DAYS, VOICE_GHOST_SECONDS
from meadhall.runtime import Runtime
from meadhall.social.calls.service import joined_by_call_room
from meadhall.voice import queries
from meadhall.voice import state as vs
from meadhall.voice.admission import CALL_ROOM, GUILD_ROOM
from meadhall.voice.media import MediaServer, Participant
from meadhall.voice.removal import clear_state, revalidate_guild
from meadhall.voice.store import VoiceState, voice_store

RECONCILE_EVERY = 15.0
JOURNAL_CLEANUP_EVERY = 3600.0
_ABSENT_TTL = VOICE_GHOST_SECONDS * 20.0


def _absent_key(state: VoiceState) -> str:
    return f"voice:absent:{state.user_id}:{state.channel_id}"


async def _states_by_room(rt: Runtime) -> dict[str, list[VoiceState]]:
    store = voice_store(rt)
    out: dict[str, list[VoiceState]] = defaultdict(list)
    for guild_id in await store.guilds():
        for raw in await store.in_guild(guild_id):
            state = VoiceState.decode(raw)
            out[vs.room_of(state)].append(state)
    return out


async def _ghosts(rt: Runtime, states: list[VoiceState], present: set[str]) -> int:
    now = rt.clock.timestamp()
    cleared = 0
    for state in states:
        key = _absent_key(state)
        if state.user_id in present:
            await rt.store.delete(key)
            continue
        first = await rt.store.get(key, now)
        if first is None:
            first = now
            await rt.store.set(key, now, _ABSENT_TTL, now)
        if now - max(float(first), state.joined_ts) >= VOICE_GHOST_SECONDS and await clear_state(rt, state):
            await rt.store.delete(key)
            cleared += 1
    return cleared


async def reconcile(rt: Runtime) -> dict[str, int]:
    """One run; what it did (for logs and tests)."""
    done = {"revoked": 0, "ghosts": 0, "removed": 0, "restricted": 0}
    if not rt.settings.voice_enabled:
        return done
    for guild_id in await voice_store(rt).guilds():
        done["revoked"] += await revalidate_guild(rt, guild_id)
    by_room = await _states_by_room(rt)
    async with MediaServer(rt.settings) as media:
        listed = await media.rooms()
        if listed is None:
            return done
        for room in sorted({r for r in listed if GUILD_ROOM.match(r)} | set(by_room)):
            present = await media.participants(room)
            if present is None:
                continue
            states = by_room.get(room, [])
            done["ghosts"] += await _ghosts(rt, states, {p.identity for p in present})
            allowed = {s.user_id for s in states}
            for p in present:
                if p.identity not in allowed and p.identity.isdigit() and not await _joined_since(rt, room, p.identity):
                    done["removed"] += await media.remove(room, int(p.identity))
            done["restricted"] += await _restrict(rt, media, states, present)
        done["removed"] += await _call_rooms(rt, media, sorted(r for r in listed if CALL_ROOM.match(r)))
    return done


async def _restrict(rt: Runtime, media: MediaServer, states: list[VoiceState], present: list[Participant]) -> int:
    """The restrictions in force, applied to whoever the media server lets do more or less (a mute or a
    permission change it missed while down, a reconnection with an older token); how many were applied."""
    there = {p.identity: p for p in present}
    states = [s for s in states if s.user_id in there]
    if not states:
        return 0
    applied = 0
    for state, grant in zip(states, await vs.grants_now(rt, int(states[0].guild_id), states), strict=True):
        if not there[state.user_id].restricted_as(grant.sources, deafened=state.server_deafen):
            applied += await media.restrict(grant.room, int(state.user_id), grant.sources,
                                            deafened=state.server_deafen)
    return applied


async def _joined_since(rt: Runtime, room: str, identity: str) -> bool:
    """Whether the user joined this room after the states were read (their client may already be there)."""
    _, mine = await vs.current(rt, int(identity))
    return mine is not None and vs.room_of(mine) == room


async def _call_rooms(rt: Runtime, media: MediaServer, rooms: list[str]) -> int:
    """A conversation call's room holds only the call's joined participants: who left, was removed from the
    group, or whose call ended is removed (they may still hold a valid token). The participants are read once,
    after the media server's lists, so someone who joined meanwhile is among them."""
    present: dict[str, list[str]] = {}
    for room in rooms:
        found = await media.participants(room)
        if found:
            present[room] = [p.identity for p in found]
    if not present:
        return 0
    joined = await joined_by_call_room(rt)
    removed = 0
    for room, identities in present.items():
        allowed = joined.get(room, set())
        for identity in identities:
            if identity.isdigit() and int(identity) not in allowed:
                removed += await media.remove(room, int(identity))
    return removed


async def forget_old_webhooks(rt: Runtime) -> int:
    cutoff = rt.clock.now() - timedelta(days=MEDIA_WEBHOOK_JOURNAL_DAYS)
    async with rt.uow() as uow:
        return await queries.delete_webhook_events_before(uow.conn, cutoff)


def add_voice_jobs(rt: Runtime) -> None:
    async def run() -> None:
        await reconcile(rt)

    async def journal() -> None:
        await forget_old_webhooks(rt)

    rt.jobs.add("voice-reconcile", RECONCILE_EVERY, run)
    rt.jobs.add("media-webhook-journal", JOURNAL_CLEANUP_EVERY, journal)

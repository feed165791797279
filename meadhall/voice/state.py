"""What every voice operation shares (docs/voice.md): the permissions that decide a participant's media
sources, their token grant, the compare-and-set loop over the voice store, and VOICE_STATE_UPDATE to the
members who may view the room concerned.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core import permissions as perms
from meadhall.core.errors import AppError
from meadhall.db.uow import UnitOfWork
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.members.service import member_views
from meadhall.guilds.members.views import MemberView
from meadhall.integrations.livekit import CAMERA, MICROPHONE, SCREEN_SOURCES, MediaGrant, guild_voice_room
from meadhall.realtime.guild_state import GuildState, cached_state
from meadhall.runtime import Runtime
from meadhall.voice.events import notify_voice_state
from meadhall.voice.store import Limit, VoiceState, voice_store

P = perms.P
CAS_ATTEMPTS = 8


def sources_of(mask: int) -> tuple[str, ...]:
    """What a member may publish in a room: the microphone with SPEAK, the camera with VIDEO, the screen
    (video and its sound) with STREAM."""
    out: list[str] = []
    if mask & P.SPEAK:
        out.append(MICROPHONE)
    if mask & P.VIDEO:
        out.append(CAMERA)
    if mask & P.STREAM:
        out.extend(SCREEN_SOURCES)
    return tuple(out)


def grant_of(state: VoiceState, mask: int) -> MediaGrant:
    """The token's grant: the sources above, minus the microphone while server-muted; metadata flags from
    PRIORITY_SPEAKER and (lacking USE_VAD) push to talk."""
    sources = sources_of(mask)
    if state.server_mute:
        sources = tuple(s for s in sources if s != MICROPHONE)
    return MediaGrant(room=room_of(state), sources=sources, priority_speaker=bool(mask & P.PRIORITY_SPEAKER),
                      push_to_talk_required=not mask & P.USE_VAD)


async def grant_now(rt: Runtime, state: VoiceState) -> MediaGrant:
    """What the participant may do in their room now (their permissions there, the moderators' flags): the
    restrictions applied on the media server after a moderation, a (re)connection and by the reconciliation."""
    return (await grants_now(rt, int(state.guild_id), [state]))[0]


async def grants_now(rt: Runtime, guild_id: int, states: list[VoiceState]) -> list[MediaGrant]:
    """`grant_now` of several states of one guild, its permissions read once."""
    async with rt.read() as uow:
        guild = await guild_state(uow.conn, guild_id)
    now = rt.clock.now()
    return [grant_of(s, 0 if guild is None else mask_in(guild, int(s.user_id), int(s.channel_id), now))
            for s in states]


def room_of(state: VoiceState) -> str:
    return guild_voice_room(int(state.guild_id), int(state.channel_id))


async def guild_state(conn: AsyncConnection, guild_id: int) -> GuildState | None:
    guild = await guild_queries.select_guild(conn, guild_id)
    return None if guild is None else await cached_state(conn, guild_id, int(guild["perm_version"]))


def mask_in(state: GuildState, user_id: int, channel_id: int, now: Any) -> int:
    """The member's permissions in one room (0 for a non-member: voice is for members)."""
    info = state.members.get(user_id)
    if info is None:
        return 0
    ctx = state.context(user_id, info.is_instance_admin, now)
    return int(perms.channel_permissions(ctx, state.roles, state.channel_overrides(channel_id)))


async def current(rt: Runtime, user_id: int) -> tuple[str | None, VoiceState | None]:
    raw = await voice_store(rt).get(user_id)
    return raw, None if raw is None else VoiceState.decode(raw)


Change = Callable[[VoiceState | None], VoiceState | None]


async def change_state(rt: Runtime, user_id: int, change: Change, limit: Limit | None = None
                       ) -> tuple[VoiceState | None, VoiceState | None]:
    """Apply `change(current) -> next` atomically; (before, after). `change` may raise to refuse, and
    returning the current state unchanged writes nothing."""
    store = voice_store(rt)
    for _ in range(CAS_ATTEMPTS):
        raw, before = await current(rt, user_id)
        after = change(before)
        if after == before:
            return before, after
        outcome = await store.cas(user_id, raw, after, limit)
        if outcome == "full":
            raise AppError("voice.channel_full")
        if outcome == "ok":
            return before, after
    # Eight lost races in a row (each a write by another request for the same user) do not happen in practice.
    raise RuntimeError(f"voice state of user {user_id} kept changing")


def view_of(state: VoiceState, member: MemberView | None, *, left: bool = False) -> dict[str, Any]:
    """The VoiceState object; `left`: the one that reports leaving (`channel_id` null)."""
    return {
        "guild_id": state.guild_id, "channel_id": None if left else state.channel_id, "user_id": state.user_id,
        "member": member, "microphone": state.microphone, "sound": state.sound, "camera": state.camera,
        "screen": state.screen, "server_mute": state.server_mute, "server_deafen": state.server_deafen,
        "joined_at": state.joined_at,
    }


async def views_of(conn: AsyncConnection, guild_id: int, states: list[VoiceState], now: Any) -> list[dict[str, Any]]:
    members = await member_views(conn, guild_id, [int(s.user_id) for s in states], now)
    return [view_of(s, members.get(int(s.user_id))) for s in states]


async def viewers_of_room(conn: AsyncConnection, guild_id: int, channel_id: int, now: Any) -> set[int]:
    state = await guild_state(conn, guild_id)
    return set() if state is None else set(state.viewers(channel_id, now))


async def announce(uow: UnitOfWork, before: VoiceState | None, after: VoiceState | None) -> None:
    """VOICE_STATE_UPDATE for a change: the new state to the viewers of its room; the leaving one (`channel_id`
    null) to the viewers of the room left who do not see the new one (a move to a room they cannot view
    reads to them as leaving)."""
    told: set[int] = set()
    if after is not None:
        told = await viewers_of_room(uow.conn, int(after.guild_id), int(after.channel_id), uow.now)
        member = (await member_views(uow.conn, int(after.guild_id), [int(after.user_id)], uow.now)).get(
            int(after.user_id))
        uow.emit(notify_voice_state(view_of(after, member), told))
    if before is not None and (after is None or (before.guild_id, before.channel_id)
                               != (after.guild_id, after.channel_id)):
        viewers = await viewers_of_room(uow.conn, int(before.guild_id), int(before.channel_id), uow.now)
        member = (await member_views(uow.conn, int(before.guild_id), [int(before.user_id)], uow.now)).get(
            int(before.user_id))
        uow.emit(notify_voice_state(view_of(before, member, left=True), viewers - told))

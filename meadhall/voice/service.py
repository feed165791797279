"""Joining and leaving guild voice rooms, the list of voice states and a participant's own flags (docs/voice.md;
OpenAPI: joinVoice, leaveVoice, listVoiceStates, updateOwnVoiceState).

A user is in one voice context at a time: joining a room moves them out of the room they were in (of any
guild) and out of the call they were joined in (social/calls), and joining a call takes them out of their
voice room (the calls' hook, registered by voice/setup.py).
"""

from __future__ import annotations

from typing import Any

from meadhall.accounts.queries import select_user
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.clock import iso
from meadhall.core.errors import AppError, permission_denied
from meadhall.core.ids import parse_id
from meadhall.guilds.access import ChannelContext, access_channel, access_guild, require_in
from meadhall.guilds.hooks import takes_part_in_conversation
from meadhall.integrations.livekit import check_voice_enabled, media_token
from meadhall.messages.system import post_system_message
from meadhall.runtime import Runtime
from meadhall.social.calls.service import do_leave_joined_calls
from meadhall.voice import state as vs
from meadhall.voice.media import MediaServer
from meadhall.voice.store import Limit, VoiceState, voice_store

P = perms.P
FLAG_PERMISSIONS = {"microphone": P.SPEAK, "camera": P.VIDEO, "screen": P.STREAM}


async def _voice_room(rt: Runtime, principal: Principal, raw_channel_id: str) -> ChannelContext:
    """The voice room the caller may view, with the caller's row; 404 unseen, 422 another kind of room (or a
    conversation the caller takes part in)."""
    async with rt.read() as uow:
        try:
            cc = await access_channel(uow.conn, principal, raw_channel_id, uow.now, with_caller=True)
        except AppError as err:
            channel_id = parse_id(raw_channel_id)
            if (err.code == "channel.not_found" and channel_id is not None
                    and await takes_part_in_conversation(uow.conn, principal.user_id, channel_id)):
                raise AppError("channel.wrong_type", "Only voice rooms can be joined") from None
            raise
    if cc.channel["type"] != "voice":
        raise AppError("channel.wrong_type", "Only voice rooms can be joined")
    if cc.guild.member is None:
        raise permission_denied(None, "Only members of the server can join its voice rooms")
    require_in(cc, P.CONNECT_VOICE)
    return cc


async def do_join_voice(rt: Runtime, principal: Principal, raw_channel_id: str) -> dict[str, Any]:
    """Join (or move to) the voice room; in it already: the same state with a fresh token. 409
    `voice.channel_full` when `user_limit` participants are in it. VOICE_STATE_UPDATE to the room's viewers,
    the system message `voice_join` in the room."""
    check_voice_enabled(rt.settings)
    cc = await _voice_room(rt, principal, raw_channel_id)
    me, guild_id, channel_id = principal.user_id, cc.guild.guild_id, cc.channel_id
    now = rt.clock.now()

    def join(before: VoiceState | None) -> VoiceState | None:
        if before is not None and (before.guild_id, before.channel_id) == (str(guild_id), str(channel_id)):
            return before
        fresh = VoiceState(str(guild_id), str(channel_id), str(me), microphone=bool(cc.permissions & P.SPEAK),
                           sound=True, camera=False, screen=False, server_mute=False, server_deafen=False,
                           joined_at=str(iso(now)), joined_ts=now.timestamp())
        if before is not None and before.guild_id == fresh.guild_id:
            # A move within the server keeps the own flags and what moderators set.
            return fresh.but(microphone=before.microphone and fresh.microphone, sound=before.sound,
                             server_mute=before.server_mute, server_deafen=before.server_deafen)
        return fresh

    before, after = await vs.change_state(rt, me, join, Limit(str(channel_id), int(cc.channel["user_limit"] or 0)))
    assert after is not None
    moved = before != after
    if moved:
        await do_leave_joined_calls(rt, me)
        async with rt.uow() as uow:
            name = cc.caller["display_name"] if cc.caller else ""
            await post_system_message(uow, guild_id=guild_id, channel_id=channel_id, type_="voice_join", user_id=me,
                                      display_name=name)
            await vs.announce(uow, before, after)
        if before is not None:
            async with MediaServer(rt.settings) as media:
                await media.remove(vs.room_of(before), me)
    async with rt.read() as uow:
        view = (await vs.views_of(uow.conn, guild_id, [after], uow.now))[0]
        user = await select_user(uow.conn, me)
    grant = vs.grant_of(after, cc.permissions)
    token = media_token(rt.settings, me, "" if user is None else str(user["display_name"]), grant, rt.clock.now())
    return {"token": token, "url": rt.settings.MEDIA_PUBLIC_URL, "room": grant.room, "voice_state": view,
            "push_to_talk_required": grant.push_to_talk_required}


async def do_leave_voice(rt: Runtime, principal: Principal, raw_channel_id: str) -> None:
    """Leave the voice room (idempotent: not in it, nothing happens)."""
    check_voice_enabled(rt.settings)
    channel_id = parse_id(raw_channel_id)

    def leave(before: VoiceState | None) -> VoiceState | None:
        return None if before is not None and before.channel_id == str(channel_id) else before

    before, after = await vs.change_state(rt, principal.user_id, leave)
    if before is not None and after is None:
        await finish_removal(rt, before)


async def finish_removal(rt: Runtime, before: VoiceState) -> None:
    """After a state was cleared: VOICE_STATE_UPDATE (`channel_id` null) and the media server's removal."""
    async with rt.read() as uow:
        await vs.announce(uow, before, None)
    async with MediaServer(rt.settings) as media:
        await media.remove(vs.room_of(before), int(before.user_id))


async def leave_voice_of(rt: Runtime, user_id: int) -> None:
    """Take the user out of whatever voice room they are in (joining a call: one voice context at a time)."""
    before, after = await vs.change_state(rt, user_id, lambda _: None)
    if before is not None:
        await finish_removal(rt, before)


async def access_voice_states(rt: Runtime, principal: Principal, raw_guild_id: str) -> dict[str, Any]:
    """The voice states of the guild's rooms the caller may view."""
    check_voice_enabled(rt.settings)
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        states = await visible_states(rt, uow.conn, gc.guild_id, principal.user_id, uow.now)
        return {"voice_states": await vs.views_of(uow.conn, gc.guild_id, states, uow.now)}


async def visible_states(rt: Runtime, conn: Any, guild_id: int, user_id: int, now: Any) -> list[VoiceState]:
    raws = await voice_store(rt).in_guild(guild_id)
    if not raws:
        return []
    state = await vs.guild_state(conn, guild_id)
    if state is None:
        return []
    states = sorted((VoiceState.decode(r) for r in raws), key=lambda s: (s.joined_ts, s.user_id))
    return [s for s in states if user_id in state.viewers(int(s.channel_id), now)]


async def do_update_own_flags(rt: Runtime, principal: Principal, raw_guild_id: str, flags: dict[str, bool]
                              ) -> dict[str, Any]:
    """The caller's own flags in their voice room of this guild; turning the microphone, camera or screen on
    needs SPEAK, VIDEO or STREAM in that room."""
    check_voice_enabled(rt.settings)
    me = principal.user_id
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        guild = await vs.guild_state(uow.conn, gc.guild_id)
    _, mine = await vs.current(rt, me)
    if mine is None or mine.guild_id != str(gc.guild_id) or guild is None:
        raise AppError("voice_state.not_found", "You are not in a voice room of this server")
    mask = vs.mask_in(guild, me, int(mine.channel_id), rt.clock.now())
    for name, flag in FLAG_PERMISSIONS.items():
        if flags.get(name) and not mask & flag:
            raise permission_denied(flag.name, f"Missing permission {flag.name} in this voice room")

    def update(before: VoiceState | None) -> VoiceState | None:
        if before is None or (before.guild_id, before.channel_id) != (mine.guild_id, mine.channel_id):
            raise AppError("voice_state.not_found", "You are not in a voice room of this server")
        return before.but(**flags)

    before, after = await vs.change_state(rt, me, update)
    assert after is not None
    async with rt.read() as uow:
        if before != after:
            await vs.announce(uow, before, after)
        view = (await vs.views_of(uow.conn, gc.guild_id, [after], uow.now))[0]
    return {"voice_state": view}


async def fill_ready_voice_states(rt: Runtime, conn: Any, snapshots: list[dict[str, Any]], user_id: int, now: Any
                                  ) -> None:
    """READY: each guild snapshot's `voice_states` (the rooms the user may view). One store read names the
    guilds that have any, so a user of many quiet guilds pays nothing more."""
    if not rt.settings.voice_enabled or not snapshots:
        return
    active = set(await voice_store(rt).guilds())
    for snapshot in snapshots:
        guild_id = int(snapshot["id"])
        if guild_id in active:
            states = await visible_states(rt, conn, guild_id, user_id, now)
            snapshot["voice_states"] = await vs.views_of(conn, guild_id, states, now)

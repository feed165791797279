"""Voice moderation (docs/voice.md; OpenAPI: updateVoiceState, moveVoiceState, disconnectVoiceState): server
mute and deafen, moves between voice rooms and disconnection, each audited, announced and applied on the
media server too. The hierarchy applies: a moderator acts only on members ranked below them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError, permission_denied
from meadhall.core.ids import parse_id
from meadhall.guilds.access import GuildContext, access_guild, access_guild_channel, channel_permissions
from meadhall.guilds.members.service import load_target
from meadhall.guilds.rooms import queries as room_queries
from meadhall.integrations.livekit import check_voice_enabled
from meadhall.runtime import Runtime
from meadhall.voice import state as vs
from meadhall.voice.media import MediaServer
from meadhall.voice.service import finish_removal
from meadhall.voice.store import VoiceState

P = perms.P


@dataclass(frozen=True)
class Target:
    gc: GuildContext
    state: VoiceState
    mask: int  # the caller's permissions in the target's room
    outranked: bool  # the caller ranks above the target (the hierarchy)

    def require(self, flag: perms.Permission, where: str) -> None:
        """The permission first (who lacks it learns which), then the hierarchy."""
        _require(self.mask, flag, where)
        if not self.outranked:
            raise permission_denied(None, "You can only moderate members ranked below you")


async def _target(rt: Runtime, principal: Principal, raw_guild_id: str, raw_user_id: str) -> Target:
    """The guild, the target's voice state in it (404 `voice_state.not_found`), the caller's permissions in
    the target's room and whether the hierarchy lets them act."""
    check_voice_enabled(rt.settings)
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        user_id = principal.user_id if raw_user_id == "@me" else parse_id(raw_user_id)
        _, target = (None, None) if user_id is None else await vs.current(rt, user_id)
        if target is None or target.guild_id != str(gc.guild_id):
            raise AppError("voice_state.not_found")
        overrides = await room_queries.select_overrides(uow.conn, int(target.channel_id))
        mask = channel_permissions(gc, overrides)
        if not mask & P.VIEW_CHANNEL:
            raise AppError("voice_state.not_found")
        actor_on, _ = await load_target(uow, gc, int(target.user_id))
    return Target(gc, target, mask, perms.can_act_on(gc.actor, actor_on, gc.roles))


def _require(mask: int, flag: perms.Permission, where: str) -> None:
    if not mask & flag:
        raise permission_denied(flag.name, f"Missing permission {flag.name} {where}")


async def _apply_restrictions(rt: Runtime, state: VoiceState) -> None:
    """Mute and deafen on the media server: the sources the member may publish without the microphone while
    muted, no subscriptions while deafened."""
    grant = await vs.grant_now(rt, state)
    async with MediaServer(rt.settings) as media:
        await media.restrict(grant.room, int(state.user_id), grant.sources, deafened=state.server_deafen)


async def do_moderate_voice_state(rt: Runtime, principal: Principal, raw_guild_id: str, raw_user_id: str,
                                  changes: dict[str, bool]) -> dict[str, Any]:
    """`server_mute` (MUTE_MEMBERS) and `server_deafen` (DEAFEN_MEMBERS) in the target's room; audited as
    `voice.mute` / `voice.deafen` with the new value."""
    t = await _target(rt, principal, raw_guild_id, raw_user_id)
    gc, target = t.gc, t.state
    if "server_mute" in changes:
        t.require(P.MUTE_MEMBERS, "in that voice room")
    if "server_deafen" in changes:
        t.require(P.DEAFEN_MEMBERS, "in that voice room")

    def moderate(before: VoiceState | None) -> VoiceState | None:
        if before is None or (before.guild_id, before.channel_id) != (target.guild_id, target.channel_id):
            raise AppError("voice_state.not_found")
        return before.but(**changes)

    before, after = await vs.change_state(rt, int(target.user_id), moderate)
    assert after is not None
    async with rt.uow() as uow:
        for field, action in (("server_mute", "voice.mute"), ("server_deafen", "voice.deafen")):
            if field in changes:
                await record(uow, action, actor_id=principal.user_id, target_type="user",
                             target_id=int(after.user_id), guild_id=gc.guild_id,
                             data={"value": changes[field], "channel_id": after.channel_id})
        if before != after:
            await vs.announce(uow, before, after)
        view = (await vs.views_of(uow.conn, gc.guild_id, [after], uow.now))[0]
    await _apply_restrictions(rt, after)
    return {"voice_state": view}


async def do_move_voice_state(rt: Runtime, principal: Principal, raw_guild_id: str, raw_user_id: str,
                              raw_channel_id: str) -> dict[str, Any]:
    """Move a participant to another voice room of the guild: MOVE_MEMBERS in both rooms, the user limit does
    not apply; the member must be able to connect there. Audited as `voice.move`."""
    t = await _target(rt, principal, raw_guild_id, raw_user_id)
    gc, target = t.gc, t.state
    t.require(P.MOVE_MEMBERS, "in the member's voice room")
    async with rt.read() as uow:
        cc = await access_guild_channel(uow.conn, gc, raw_channel_id)
        if cc.channel["type"] != "voice":
            raise AppError("channel.wrong_type", "Members can only be moved to a voice room")
        _require(cc.permissions, P.MOVE_MEMBERS, "in the target voice room")
        guild = await vs.guild_state(uow.conn, gc.guild_id)
        theirs = 0 if guild is None else vs.mask_in(guild, int(target.user_id), cc.channel_id, uow.now)
    if not theirs & P.VIEW_CHANNEL or not theirs & P.CONNECT_VOICE:
        raise permission_denied("CONNECT_VOICE", "The member cannot connect to that voice room")
    to = str(cc.channel_id)

    def move(before: VoiceState | None) -> VoiceState | None:
        if before is None or (before.guild_id, before.channel_id) != (target.guild_id, target.channel_id):
            raise AppError("voice_state.not_found")
        return before.but(channel_id=to)

    before, after = await vs.change_state(rt, int(target.user_id), move)
    assert before is not None and after is not None
    async with rt.uow() as uow:
        if before != after:
            await record(uow, "voice.move", actor_id=principal.user_id, target_type="user",
                         target_id=int(after.user_id), guild_id=gc.guild_id,
                         data={"from_channel_id": before.channel_id, "to_channel_id": after.channel_id})
            await vs.announce(uow, before, after)
        view = (await vs.views_of(uow.conn, gc.guild_id, [after], uow.now))[0]
    if before != after:
        async with MediaServer(rt.settings) as media:
            await media.move(vs.room_of(before), int(after.user_id), vs.room_of(after))
    return {"voice_state": view}


async def do_disconnect_voice_state(rt: Runtime, principal: Principal, raw_guild_id: str, raw_user_id: str) -> None:
    """Disconnect a participant from voice (MOVE_MEMBERS in their room); audited as `voice.disconnect`."""
    t = await _target(rt, principal, raw_guild_id, raw_user_id)
    gc, target = t.gc, t.state
    t.require(P.MOVE_MEMBERS, "in the member's voice room")

    def disconnect(before: VoiceState | None) -> VoiceState | None:
        if before is None or (before.guild_id, before.channel_id) != (target.guild_id, target.channel_id):
            raise AppError("voice_state.not_found")
        return None

    before, _ = await vs.change_state(rt, int(target.user_id), disconnect)
    assert before is not None
    async with rt.uow() as uow:
        await record(uow, "voice.disconnect", actor_id=principal.user_id, target_type="user",
                     target_id=int(before.user_id), guild_id=gc.guild_id,
                     data={"from_channel_id": before.channel_id, "to_channel_id": None})
    await finish_removal(rt, before)

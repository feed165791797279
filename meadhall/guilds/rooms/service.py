"""Rooms and categories of a guild, and their permission overrides (OpenAPI: createChannel, updateChannel,
setPermissionOverride)."""

from __future__ import annotations

from typing import Any

from meadhall.accounts import queries as account_queries
from meadhall.audit.diff import changes
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError, permission_denied, validation_error
from meadhall.core.ids import parse_id
from meadhall.core.limits import ROOM_POSITION_MAX
from meadhall.db.uow import UnitOfWork
from meadhall.files.cleanup import drop_channel_files
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.access import (
    ChannelContext,
    GuildContext,
    access_channel,
    access_guild,
    channel_permissions,
    require,
    require_in,
    visible_channels,
)
from meadhall.guilds.hooks import GuildNotice, access_changed, announce_in_room, takes_part_in_conversation
from meadhall.guilds.invites import queries as invite_queries
from meadhall.guilds.members import queries as member_queries
from meadhall.guilds.roles import queries as role_queries
from meadhall.guilds.rooms import queries as room_queries
from meadhall.guilds.rooms.events import notify_channel
from meadhall.guilds.rooms.views import channel_view
from meadhall.guilds.rows import ChannelRow, OverrideRow
from meadhall.guilds.structure import channel_row
from meadhall.realtime.audience import GuildViewers
from meadhall.realtime.events import EventType
from meadhall.runtime import Runtime

MAX_CHANNELS = 500
P = perms.P


async def access_channels(rt: Runtime, principal: Principal, raw_guild_id: str) -> dict[str, Any]:
    """Only what the caller may view: three queries for the whole guild, whatever its size."""
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        rows = await room_queries.select_channels(uow.conn, gc.guild_id)
        overrides = await room_queries.select_guild_overrides(uow.conn, gc.guild_id)
    return {"channels": [channel_view(r, overrides.get(r["id"], [])) for r in visible_channels(gc, rows, overrides)]}


async def access_channel_view(rt: Runtime, principal: Principal, raw_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        cc = await access_channel(uow.conn, principal, raw_id, uow.now)
    return {"channel": channel_view(cc.channel, cc.overrides)}


async def access_guild_room(uow: UnitOfWork, principal: Principal, raw_id: str) -> ChannelContext:
    """A guild room the caller can view, for operations only rooms have (overrides, backgrounds): a
    conversation the caller takes part in answers 422 `channel.wrong_type`, anything else unseen 404."""
    try:
        return await access_channel(uow.conn, principal, raw_id, uow.now)
    except AppError as exc:
        channel_id = parse_id(raw_id)
        if (exc.code == "channel.not_found" and channel_id is not None
                and await takes_part_in_conversation(uow.conn, principal.user_id, channel_id)):
            raise AppError("channel.wrong_type", "Direct conversations have no such setting") from None
        raise


async def _seen_rooms(uow: UnitOfWork, gc: GuildContext) -> dict[int, ChannelRow]:
    """The guild's rooms and categories the caller may view (docs/reference/permissions.md). The others do not exist for the caller:
    naming one as a room to move or as a parent is answered like an unknown id, so nothing about it leaks."""
    rows = await room_queries.select_channels(uow.conn, gc.guild_id)
    overrides = await room_queries.select_guild_overrides(uow.conn, gc.guild_id)
    return {r["id"]: r for r in visible_channels(gc, rows, overrides)}


async def _parent(uow: UnitOfWork, gc: GuildContext, raw: Any, type_: str,
                  seen: dict[int, ChannelRow] | None = None) -> int | None:
    if raw is None:
        return None
    if type_ == "category":
        raise validation_error("parent_id", "a category cannot have a parent")
    parent_id = parse_id(raw)
    if seen is None:
        seen = await _seen_rooms(uow, gc)
    parent = None if parent_id is None else seen.get(parent_id)
    if parent is None or parent["type"] != "category":
        raise validation_error("parent_id", "must be a category of this server")
    return parent_id


def _check_overrides(gc: GuildContext, specs: list[dict[str, Any]], room_overrides: list[OverrideRow]) -> None:
    """An override may only allow or deny what the caller holds in that room (docs/reference/permissions.md)."""
    held = channel_permissions(gc, room_overrides)
    for spec in specs:
        if not perms.override_allowed(held, spec["allow"], spec["deny"]):
            raise permission_denied(None, "An override may only allow or deny permissions you hold in this room")


async def _viewers_and_emit(uow: UnitOfWork, type_: EventType, gc: GuildContext, channel_id: int) -> list[int]:
    channel = await room_queries.select_channel(uow.conn, channel_id)
    assert channel is not None
    overrides = await room_queries.select_overrides(uow.conn, channel_id)
    viewers = (await GuildViewers.load(uow.conn, gc.guild_id, uow.now)).viewers(channel_id)
    uow.emit(notify_channel(type_, channel_view(channel, overrides), viewers))
    return viewers


async def do_create_channel(rt: Runtime, principal: Principal, raw_guild_id: str, body: dict[str, Any]
                         ) -> dict[str, Any]:
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.MANAGE_CHANNELS)
        type_ = body["type"]
        if type_ != "voice" and body.get("user_limit") is not None:
            raise validation_error("user_limit", "only voice rooms have a user limit")
        parent_id = await _parent(uow, gc, body.get("parent_id"), type_)
        if await room_queries.count_channels(uow.conn, gc.guild_id) >= MAX_CHANNELS:
            raise AppError("channel.limit_reached")
        specs = body.get("permission_overrides")
        if specs is None and parent_id is not None:
            # A room created in a category starts with a copy of the category's overrides (OpenAPI: createChannel).
            specs = [{"id": o["target_id"], "type": o["kind"], "allow": int(o["allow"]), "deny": int(o["deny"])}
                     for o in await room_queries.select_overrides(uow.conn, parent_id)]
        elif specs:
            await _validate_targets(uow, gc, specs)
            _check_overrides(gc, specs, [])
        siblings = [r for r in await room_queries.select_channels(uow.conn, gc.guild_id) if r["parent_id"] == parent_id]
        position = body.get("position")
        if position is None:
            position = min(max((r["position"] for r in siblings), default=-1) + 1, ROOM_POSITION_MAX)
        row = channel_row(uow, gc.guild_id, name=body["name"], type_=type_, topic=body.get("topic"),
                          position=position, parent_id=parent_id,
                          slowmode_seconds=body.get("slowmode_seconds") or 0, user_limit=body.get("user_limit"))
        await room_queries.insert_channel(uow.conn, row)
        await room_queries.insert_overrides(uow.conn, [
            {"channel_id": row["id"], "target_id": int(s["id"]), "kind": s["type"], "allow": s["allow"],
             "deny": s["deny"]} for s in specs or []
        ])
        viewers = await _viewers_and_emit(uow, EventType.CHANNEL_CREATE, gc, row["id"])
        if type_ in ("text", "voice"):
            actor = await account_queries.select_user(uow.conn, principal.user_id)
            assert actor is not None
            await announce_in_room(uow, GuildNotice(gc.guild_id, row["id"], "channel_create", principal.user_id,
                                                    actor["display_name"], viewers=viewers))
        await record(uow, "channel.create", actor_id=principal.user_id, target_type="channel",
                     target_id=row["id"], guild_id=gc.guild_id, data={"name": row["name"], "type": type_})
        channel = await room_queries.select_channel(uow.conn, row["id"])
        overrides = await room_queries.select_overrides(uow.conn, row["id"])
    assert channel is not None
    return {"channel": channel_view(channel, overrides)}


async def _validate_targets(uow: UnitOfWork, gc: GuildContext, specs: list[dict[str, Any]]) -> None:
    for spec in specs:
        target = parse_id(spec["id"])
        if target is None:
            raise validation_error("permission_overrides.id", "must be an id")
        if spec["type"] == "role" and await role_queries.select_role(uow.conn, gc.guild_id, target) is None:
            raise AppError("role.not_found")
        if spec["type"] == "member" and await member_queries.select_member(uow.conn, gc.guild_id, target) is None:
            raise AppError("member.not_found")


async def do_update_channel(rt: Runtime, principal: Principal, raw_id: str, fields: dict[str, Any]) -> dict[str, Any]:
    async with rt.uow() as uow:
        cc = await access_channel(uow.conn, principal, raw_id, uow.now)
        require_in(cc, P.MANAGE_CHANNELS)
        values = dict(fields)
        type_ = cc.channel["type"]
        if "parent_id" in values:
            values["parent_id"] = await _parent(uow, cc.guild, values["parent_id"], type_)
        if "user_limit" in values and type_ != "voice":
            raise validation_error("user_limit", "only voice rooms have a user limit")
        if type_ == "category":
            for field in ("topic", "slowmode_seconds"):
                if values.get(field):
                    raise validation_error(field, "categories have no " + field)
        diff = changes(cc.channel, values)
        if diff:
            await room_queries.update_channel_row(uow.conn, cc.channel_id, values)
            await record(uow, "channel.update", actor_id=principal.user_id, target_type="channel",
                         target_id=cc.channel_id, guild_id=cc.guild.guild_id, data={"changes": diff})
            await _viewers_and_emit(uow, EventType.CHANNEL_UPDATE, cc.guild, cc.channel_id)
        channel = await room_queries.select_channel(uow.conn, cc.channel_id)
    assert channel is not None
    return {"channel": channel_view(channel, cc.overrides)}


async def do_reorder_channels(rt: Runtime, principal: Principal, raw_guild_id: str, moves: list[dict[str, Any]]
                           ) -> dict[str, Any]:
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.MANAGE_CHANNELS)
        rows = await _seen_rooms(uow, gc)
        changed: list[int] = []
        for move in moves:
            channel_id = parse_id(move["id"])
            if channel_id not in rows:
                raise validation_error("channels.id", f"unknown room {move['id']}")
            values: dict[str, Any] = {"position": move["position"]}
            if "parent_id" in move:
                values["parent_id"] = await _parent(uow, gc, move["parent_id"], rows[channel_id]["type"], rows)
            if changes(rows[channel_id], values):
                await room_queries.update_channel_row(uow.conn, channel_id, values)
                changed.append(channel_id)
        viewers = await GuildViewers.load(uow.conn, gc.guild_id, uow.now)
        result = []
        for channel_id in changed:
            channel = await room_queries.select_channel(uow.conn, channel_id)
            overrides = await room_queries.select_overrides(uow.conn, channel_id)
            assert channel is not None
            view = channel_view(channel, overrides)
            result.append(view)
            uow.emit(notify_channel(EventType.CHANNEL_UPDATE, view, viewers.viewers(channel_id)))
        if changed:
            await record(uow, "channel.update", actor_id=principal.user_id, target_type="channel",
                         target_id=changed[0], guild_id=gc.guild_id,
                         data={"reorder": [{"id": str(c)} for c in changed]})
    return {"channels": result}


async def do_delete_channel(rt: Runtime, principal: Principal, raw_id: str) -> None:
    async with rt.uow() as uow:
        cc = await access_channel(uow.conn, principal, raw_id, uow.now)
        require_in(cc, P.MANAGE_CHANNELS)
        gc = cc.guild
        viewers = (await GuildViewers.load(uow.conn, gc.guild_id, uow.now)).viewers(cc.channel_id)
        view = channel_view(cc.channel, cc.overrides)
        orphans = [r for r in await room_queries.select_channels(uow.conn, gc.guild_id) if r["parent_id"] == cc.channel_id]
        await _rehome_public_invite(uow, gc, cc.channel_id)
        await room_queries.delete_channel_row(uow.conn, cc.channel_id)
        await drop_channel_files(uow, rt.files, cc.channel_id)
        if gc.guild["system_channel_id"] == cc.channel_id:
            await guild_queries.update_guild_row(uow.conn, gc.guild_id, {"system_channel_id": None})
        uow.emit(notify_channel(EventType.CHANNEL_DELETE, view, viewers))
        for orphan in orphans:
            # Rooms of a deleted category lose their category.
            await room_queries.update_channel_row(uow.conn, orphan["id"], {"parent_id": None})
            await _viewers_and_emit(uow, EventType.CHANNEL_UPDATE, gc, orphan["id"])
        await record(uow, "channel.delete", actor_id=principal.user_id, target_type="channel",
                     target_id=cc.channel_id, guild_id=gc.guild_id, data={"name": cc.channel["name"]})
    await access_changed(rt, gc.guild_id)  # the room's voice participants are disconnected


async def _rehome_public_invite(uow: UnitOfWork, gc: GuildContext, channel_id: int) -> None:
    """The permanent public invitation must outlive its room: move it to another text room, or end
    the public flag when none is left (the invitation rows of a room go with it)."""
    if not gc.guild["public"]:
        return
    others = [r for r in await room_queries.select_channels(uow.conn, gc.guild_id) if r["type"] == "text" and r["id"] != channel_id]
    if others:
        await invite_queries.update_public_invite_room(uow.conn, gc.guild_id, channel_id, others[0]["id"])
    elif await invite_queries.select_public_invite_room(uow.conn, gc.guild_id) == channel_id:
        await guild_queries.update_guild_row(uow.conn, gc.guild_id, {"public": False, "public_invite_code": None})


async def do_set_override(rt: Runtime, principal: Principal, raw_id: str, raw_target: str, kind: str,
                       allow: int, deny: int) -> None:
    await _change_override(rt, principal, raw_id, raw_target, {"type": kind, "allow": allow, "deny": deny})


async def do_delete_override(rt: Runtime, principal: Principal, raw_id: str, raw_target: str) -> None:
    await _change_override(rt, principal, raw_id, raw_target, None)


async def _change_override(rt: Runtime, principal: Principal, raw_id: str, raw_target: str,
                           spec: dict[str, Any] | None) -> None:
    """PUT/DELETE an override. Receivers who gain view get CHANNEL_CREATE, who lose it CHANNEL_DELETE,
    the others CHANNEL_UPDATE (docs/reference/events.md)."""
    async with rt.uow() as uow:
        cc = await access_guild_room(uow, principal, raw_id)
        require_in(cc, P.MANAGE_ROLES)
        gc = cc.guild
        target_id = parse_id(raw_target)
        before = (await GuildViewers.load(uow.conn, gc.guild_id, uow.now)).viewers(cc.channel_id)
        if spec is None:
            existing = next((o for o in cc.overrides if o["target_id"] == target_id), None)
            if existing is None or target_id is None:
                raise AppError("override.not_found")
            _check_overrides(gc, [{"allow": int(existing["allow"]), "deny": int(existing["deny"])}], cc.overrides)
            await room_queries.delete_override_row(uow.conn, cc.channel_id, target_id)
            action, data = "channel.override_delete", {"target_id": str(target_id), "type": existing["kind"]}
        else:
            if target_id is None:
                raise AppError("role.not_found" if spec["type"] == "role" else "member.not_found")
            spec["id"] = target_id
            await _validate_targets(uow, gc, [spec])
            _check_overrides(gc, [spec], cc.overrides)
            await room_queries.upsert_override(uow.conn, cc.channel_id, target_id, spec["type"], spec["allow"], spec["deny"])
            action = "channel.override_update"
            data = {"target_id": str(target_id), "type": spec["type"], "allow": perms.to_string(spec["allow"]),
                    "deny": perms.to_string(spec["deny"])}
        await record(uow, action, actor_id=principal.user_id, target_type="channel", target_id=cc.channel_id,
                     guild_id=gc.guild_id, data=data)
        await _emit_visibility_change(uow, gc, cc, before)
    await access_changed(rt, gc.guild_id)  # who lost CONNECT_VOICE or VIEW_CHANNEL leaves voice


async def _emit_visibility_change(uow: UnitOfWork, gc: GuildContext, cc: ChannelContext, before: list[int]) -> None:
    overrides = await room_queries.select_overrides(uow.conn, cc.channel_id)
    view = channel_view(cc.channel, overrides)
    after = (await GuildViewers.load(uow.conn, gc.guild_id, uow.now)).viewers(cc.channel_id)
    old, new = set(before), set(after)
    uow.emit(notify_channel(EventType.CHANNEL_UPDATE, view, sorted(old & new)))
    uow.emit(notify_channel(EventType.CHANNEL_CREATE, view, sorted(new - old)))
    uow.emit(notify_channel(EventType.CHANNEL_DELETE, view, sorted(old - new)))

"""Notification settings (docs/push.md, "Notification levels"; OpenAPI: getNotificationSettings,
setGuildNotificationSettings, setChannelNotificationSettings).

A PUT replaces the whole setting: what it leaves out takes its default. A setting equal to the defaults is
stored as no row, and a mute that has run out reads as none, so only settings that differ are listed. Each
change reaches every connection of the user as NOTIFICATION_SETTINGS_UPDATE."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError, validation_error
from meadhall.guilds.access import access_guild
from meadhall.messages.rooms import GuildRoom, access_message_room
from meadhall.push.settings import queries
from meadhall.push.settings.events import notify_notification_settings
from meadhall.push.settings.levels import (
    DEFAULT,
    guild_is_default,
    guild_setting_view,
    room_is_default,
    room_setting_view,
    still_muted,
)
from meadhall.push.settings.queries import GuildSettingRow, RoomSettingRow
from meadhall.runtime import Runtime


async def settings_view(conn: AsyncConnection, user_id: int, now: datetime) -> dict[str, Any]:
    """`{guilds, channels}`: the settings that differ from the defaults (the answer of GET and READY's
    `notification_settings`), in one statement."""
    guild_rows, room_rows = await queries.select_settings_of_user(conn, user_id)
    guilds = []
    for g in guild_rows:
        until = still_muted(g["muted_until"], now)
        if not guild_is_default(g["level"], until, g["suppress_everyone"]):
            guilds.append(guild_setting_view(g["guild_id"], g["level"], until, g["suppress_everyone"]))
    channels = []
    for r in room_rows:
        until = still_muted(r["muted_until"], now)
        if not room_is_default(r["level"], until, r["conversation_id"] is not None):
            channels.append(room_setting_view(r["channel_id"], r["level"], until))
    return {"guilds": guilds, "channels": channels}


async def access_notification_settings(rt: Runtime, principal: Principal) -> dict[str, Any]:
    async with rt.read() as uow:
        return await settings_view(uow.conn, principal.user_id, uow.now)


async def do_set_guild_setting(rt: Runtime, principal: Principal, raw_guild_id: str, level: str,
                               muted_until: datetime | None, suppress_everyone: bool) -> dict[str, Any]:
    """A member's setting for one server (404 `guild.not_found` for anyone else, an instance administrator who
    is not a member included: the setting lives with the membership)."""
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        if gc.member is None:
            raise AppError("guild.not_found")
        until = still_muted(muted_until, uow.now)
        if guild_is_default(level, until, suppress_everyone):
            await queries.delete_guild_setting(uow.conn, principal.user_id, gc.guild_id)
        else:
            await queries.upsert_guild_setting(uow.conn, GuildSettingRow(
                user_id=principal.user_id, guild_id=gc.guild_id, level=level, muted_until=until,
                suppress_everyone=suppress_everyone))
        setting = guild_setting_view(gc.guild_id, level, until, suppress_everyone)
        uow.emit(notify_notification_settings(setting, principal.user_id))
    return {"setting": setting}


async def do_set_room_setting(rt: Runtime, principal: Principal, raw_channel_id: str, level: str,
                              muted_until: datetime | None) -> dict[str, Any]:
    """The setting for a room the caller may view and is a member of the server of (text or voice; a category
    answers 422 `channel.wrong_type`), or for a conversation they take part in; else 404 `channel.not_found`.
    `default` (the server's level) exists only for rooms of a server."""
    async with rt.uow() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        if isinstance(room, GuildRoom) and room.cc.guild.member is None:
            raise AppError("channel.not_found")
        conversation = room.guild_id is None
        if conversation and level == DEFAULT:
            raise validation_error("level", "`default` is only for rooms of a server; a conversation takes "
                                            "all, mentions or nothing")
        until = still_muted(muted_until, uow.now)
        if room_is_default(level, until, conversation):
            await queries.delete_room_setting(uow.conn, principal.user_id, room.channel_id)
        else:
            await queries.upsert_room_setting(uow.conn, RoomSettingRow(
                user_id=principal.user_id, channel_id=room.channel_id, guild_id=room.guild_id,
                conversation_id=room.channel_id if conversation else None, level=level, muted_until=until))
        setting = room_setting_view(room.channel_id, level, until)
        uow.emit(notify_notification_settings(setting, principal.user_id))
    return {"setting": setting}

"""Moderation: guild bans (list, read, ban removing the member, unban) and kicks (OpenAPI: banUser,
kickMember); `is_banned` for joins."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts import queries as account_queries
from meadhall.accounts.views import UserColumns, user_summary
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.clock import iso
from meadhall.core.errors import AppError, permission_denied
from meadhall.core.ids import parse_id
from meadhall.guilds.access import access_guild, require
from meadhall.guilds.hooks import access_changed, purge_member_messages
from meadhall.guilds.members import queries as member_queries
from meadhall.guilds.members.service import do_remove_member, load_target
from meadhall.guilds.moderation import queries as ban_queries
from meadhall.guilds.rows import BanRow
from meadhall.runtime import Runtime

P = perms.P


async def is_banned(conn: AsyncConnection, guild_id: int, user_id: int) -> bool:
    """For joins (invitations, public servers): a banned user answers 403 `guild.banned`."""
    return await ban_queries.select_ban(conn, guild_id, user_id) is not None


def ban_view(row: BanRow, users: Mapping[int, UserColumns], now: datetime) -> dict[str, Any]:
    author = users.get(row["author_id"]) if row["author_id"] is not None else None
    return {
        "user": user_summary(users[row["user_id"]], now),
        "reason": row["reason"],
        "author": user_summary(author, now) if author is not None else None,
        "created_at": iso(row["created_at"]),
    }


async def _ban_views(conn: AsyncConnection, rows: list[BanRow], now: datetime) -> list[dict[str, Any]]:
    ids = [r["user_id"] for r in rows] + [r["author_id"] for r in rows if r["author_id"] is not None]
    users = await account_queries.select_users_by_ids(conn, ids)
    # A user row is never removed (soft deletion keeps it); skip a ban whose user vanished anyway.
    return [ban_view(r, users, now) for r in rows if r["user_id"] in users]


async def access_bans(rt: Runtime, principal: Principal, raw_guild_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.BAN_MEMBERS)
        rows = await ban_queries.select_bans(uow.conn, gc.guild_id)
        views = await _ban_views(uow.conn, rows, uow.now)
    return {"bans": views}


async def access_ban_view(rt: Runtime, principal: Principal, raw_guild_id: str, raw_user_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.BAN_MEMBERS)
        user_id = parse_id(raw_user_id)
        row = None if user_id is None else await ban_queries.select_ban(uow.conn, gc.guild_id, user_id)
        views = [] if row is None else await _ban_views(uow.conn, [row], uow.now)
    if not views:
        raise AppError("ban.not_found")
    return {"ban": views[0]}


async def do_ban_member(rt: Runtime, principal: Principal, raw_guild_id: str, raw_user_id: str,
                     reason: str | None, *, delete_message_seconds: int = 0) -> None:
    """Ban a member (hierarchy applies; they are removed) or a non-member; repeating updates the reason.
    With `delete_message_seconds`, their messages in the guild of that many seconds before now go too."""
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.BAN_MEMBERS)
        user_id = parse_id(raw_user_id)
        user = None if user_id is None else await account_queries.select_user(uow.conn, user_id)
        if user is None or user_id is None:
            raise AppError("user.not_found")
        if user_id == principal.user_id:
            raise permission_denied(None, "You cannot ban yourself")
        if user_id == gc.guild["owner_id"]:
            raise permission_denied(None, "The owner cannot be banned")
        is_member = await member_queries.select_member(uow.conn, gc.guild_id, user_id) is not None
        if is_member:
            target, _ = await load_target(uow, gc, user_id)
            if not perms.can_act_on(gc.actor, target, gc.roles):
                raise permission_denied(None, "You can only ban members ranked below you")
        await ban_queries.upsert_ban(uow.conn, gc.guild_id, user_id, reason, principal.user_id, uow.now)
        if is_member:
            await do_remove_member(uow, gc.guild, user_id, "banned", actor_id=principal.user_id)
        deleted = 0
        if delete_message_seconds:
            since = uow.now - timedelta(seconds=delete_message_seconds)
            deleted = await purge_member_messages(rt, uow, gc.guild_id, user_id, since)
        await record(uow, "member.ban", actor_id=principal.user_id, target_type="user", target_id=user_id,
                     guild_id=gc.guild_id, reason=reason, data={"was_member": is_member, "deleted_messages": deleted})
    await access_changed(rt, gc.guild_id)  # a banned member is disconnected from voice


async def do_unban_user(rt: Runtime, principal: Principal, raw_guild_id: str, raw_user_id: str) -> None:
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.BAN_MEMBERS)
        user_id = parse_id(raw_user_id)
        if user_id is None or not await ban_queries.delete_ban_row(uow.conn, gc.guild_id, user_id):
            raise AppError("ban.not_found")
        await record(uow, "member.unban", actor_id=principal.user_id, target_type="user", target_id=user_id,
                     guild_id=gc.guild_id)


async def do_kick_member(rt: Runtime, principal: Principal, raw_guild_id: str, raw_user_id: str) -> None:
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        target, _ = await load_target(uow, gc, parse_id(raw_user_id))
        require(gc, P.KICK_MEMBERS)
        if target.user_id == principal.user_id:
            raise permission_denied(None, "You cannot kick yourself; leave the server instead")
        if not perms.can_act_on(gc.actor, target, gc.roles):
            raise permission_denied(None, "You can only kick members ranked below you")
        await do_remove_member(uow, gc.guild, target.user_id, "kicked", actor_id=principal.user_id)
        await record(uow, "member.kick", actor_id=principal.user_id, target_type="user", target_id=target.user_id,
                     guild_id=gc.guild_id)
    await access_changed(rt, gc.guild_id)  # a kicked member is disconnected from voice

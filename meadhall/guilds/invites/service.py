"""Invitations (OpenAPI: createInvite, previewInvite, joinInvite, deleteInvite): create, list, preview, join and delete. The public server's
permanent invitation is created and removed by the guild's `public` flag (guilds/service.py, OpenAPI: updateGuild); here it
is joined like any other and refused for direct deletion."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts import queries as account_queries
from meadhall.accounts.queries import UserRow
from meadhall.accounts.views import UserColumns, user_summary
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.clock import iso
from meadhall.core.errors import AppError, permission_denied
from meadhall.core.ids import sid
from meadhall.files.cleanup import drop_files
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.access import access_channel, access_guild, load_guild_context, require, require_in
from meadhall.guilds.invites import queries as invite_queries
from meadhall.guilds.invites.codes import insert_invite
from meadhall.guilds.members import queries as member_queries
from meadhall.guilds.members.service import do_add_member
from meadhall.guilds.moderation.service import is_banned
from meadhall.guilds.rows import GuildRow, InviteRow
from meadhall.runtime import Runtime

MAX_INVITES_PER_GUILD = 1000
_CODE = re.compile(r"[a-z0-9]{1,16}")
P = perms.P


def parse_code(raw: str) -> str | None:
    """Codes are lower-case `a-z0-9`; anything else cannot name an invitation (404 without a query)."""
    code = raw.strip().lower()
    return code if _CODE.fullmatch(code) else None


def invite_url(origin: str, code: str) -> str:
    return f"{origin}/invite/{code}"


def invite_view(row: InviteRow, inviter: UserColumns | None, origin: str, now: datetime) -> dict[str, Any]:
    """The Invite object (OpenAPI: createInvite); `inviter` is null once the inviter's account is gone or deleted."""
    return {
        "code": row["code"],
        "url": invite_url(origin, row["code"]),
        "guild_id": str(row["guild_id"]),
        "channel_id": str(row["channel_id"]),
        "inviter": None if inviter is None or inviter["deleted_at"] is not None else user_summary(inviter, now),
        "max_age_seconds": int(row["max_age_seconds"]),
        "max_uses": int(row["max_uses"]),
        "uses": int(row["uses"]),
        "expires_at": iso(row["expires_at"]),
        "is_public": bool(row["is_public"]),
        "background_file_id": sid(row["background_file_id"]),
        "created_at": iso(row["created_at"]),
    }


def invite_guild_view(guild: GuildRow, is_member: bool) -> dict[str, Any]:
    """InviteGuild (OpenAPI: previewInvite)."""
    return {
        "id": str(guild["id"]),
        "name": guild["name"],
        "icon_file_id": sid(guild["icon_file_id"]),
        "description": guild["description"],
        "member_count": int(guild["member_count"]),
        "is_member": is_member,
    }


async def _views(conn: AsyncConnection, rows: list[InviteRow], origin: str, now: datetime) -> list[dict[str, Any]]:
    inviters = await account_queries.select_users_by_ids(
        conn, [r["inviter_id"] for r in rows if r["inviter_id"] is not None])
    return [invite_view(r, _inviter(inviters, r), origin, now) for r in rows]


def _inviter(inviters: Mapping[int, UserRow], row: InviteRow) -> UserRow | None:
    return None if row["inviter_id"] is None else inviters.get(row["inviter_id"])


async def access_invite(conn: AsyncConnection, raw_code: str, now: datetime) -> InviteRow:
    """A live invitation by code; unknown, expired and used-up ones answer 404 alike."""
    code = parse_code(raw_code)
    row = None if code is None else await invite_queries.select_live_invite(conn, code, now)
    if row is None:
        raise AppError("invite.not_found")
    return row


async def do_create_invite(rt: Runtime, principal: Principal, raw_channel_id: str, max_age_seconds: int,
                        max_uses: int) -> dict[str, Any]:
    async with rt.uow() as uow:
        cc = await access_channel(uow.conn, principal, raw_channel_id, uow.now)
        require_in(cc, P.CREATE_INVITE)
        if cc.channel["type"] not in ("text", "voice"):
            raise AppError("channel.wrong_type", "Invitations are created for text or voice rooms")
        guild_id = cc.guild.guild_id
        await invite_queries.delete_dead_invites(uow.conn, guild_id, uow.now)
        if await invite_queries.count_live_invites(uow.conn, guild_id, uow.now) >= MAX_INVITES_PER_GUILD:
            raise AppError("invite.limit_reached")
        row = await insert_invite(uow, guild_id=guild_id, channel_id=cc.channel_id, inviter_id=principal.user_id,
                                  max_age_seconds=max_age_seconds, max_uses=max_uses)
        await record(uow, "invite.create", actor_id=principal.user_id, target_type="invite", target_id=None,
                     guild_id=guild_id, data={"code": row["code"], "channel_id": str(cc.channel_id),
                                              "max_age_seconds": max_age_seconds, "max_uses": max_uses})
        views = await _views(uow.conn, [row], rt.settings.public_origin, uow.now)
    return {"invite": views[0]}


async def access_invites(rt: Runtime, principal: Principal, raw_guild_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.MANAGE_GUILD)
        rows = await invite_queries.select_live_invites(uow.conn, gc.guild_id, uow.now)
        views = await _views(uow.conn, rows, rt.settings.public_origin, uow.now)
    return {"invites": views}


async def access_invite_preview(rt: Runtime, principal: Principal | None, raw_code: str) -> dict[str, Any]:
    """`{invite, guild}` for anyone; a session only decides `guild.is_member`."""
    async with rt.read() as uow:
        row = await access_invite(uow.conn, raw_code, uow.now)
        guild = await guild_queries.select_guild(uow.conn, row["guild_id"])
        assert guild is not None  # invitations go with their guild (ON DELETE CASCADE)
        is_member = principal is not None and await member_queries.select_member(
            uow.conn, guild["id"], principal.user_id) is not None
        views = await _views(uow.conn, [row], rt.settings.public_origin, uow.now)
    return {"invite": views[0], "guild": invite_guild_view(guild, is_member)}


async def do_join_invite(rt: Runtime, principal: Principal, raw_code: str) -> dict[str, Any]:
    """Join by invitation: banned users are refused, members get the same answer with no effect,
    everyone else becomes a member and uses one use (`via: "public"` for the public invitation)."""
    try:
        async with rt.uow() as uow:
            row = await access_invite(uow.conn, raw_code, uow.now)
            guild = await guild_queries.select_guild(uow.conn, row["guild_id"])
            assert guild is not None
            guild_id = int(guild["id"])
            if await is_banned(uow.conn, guild["id"], principal.user_id):
                raise AppError("guild.banned")
            if await member_queries.select_member(uow.conn, guild["id"], principal.user_id) is not None:
                return {"guild_id": str(guild["id"])}
            if not await invite_queries.update_invite_use(uow.conn, row["code"], uow.now):
                raise AppError("invite.not_found")  # another joiner took the last use meanwhile
            # Claiming the use waited for any concurrent join through this invitation (PostgreSQL row
            # lock): look again, so the same user joining twice at once gets the member answer, not a
            # key conflict, and spends no use.
            if await member_queries.select_member(uow.conn, guild["id"], principal.user_id) is not None:
                raise _AlreadyMember
            await do_add_member(uow, guild, principal.user_id, "public" if row["is_public"] else "invite")
    except _AlreadyMember:
        pass
    return {"guild_id": str(guild_id)}


class _AlreadyMember(Exception):
    """Rolls the join transaction back (the claimed use is returned)."""


async def do_delete_invite(rt: Runtime, principal: Principal, raw_code: str) -> None:
    """By its creator or a holder of MANAGE_GUILD; the public invitation only through the guild's
    `public` flag (409 `invite.public`)."""
    async with rt.uow() as uow:
        row = await access_invite(uow.conn, raw_code, uow.now)
        if row["inviter_id"] != principal.user_id:
            gc = await load_guild_context(uow.conn, principal, row["guild_id"], uow.now)
            if gc is None:
                raise permission_denied(P.MANAGE_GUILD.name, "Missing permission MANAGE_GUILD in this server")
            require(gc, P.MANAGE_GUILD)
        if row["is_public"]:
            raise AppError("invite.public")
        await invite_queries.delete_invite_row(uow.conn, row["code"])
        await drop_files(uow, rt.files, [row["background_file_id"]])
        await record(uow, "invite.delete", actor_id=principal.user_id, target_type="invite", target_id=None,
                     guild_id=row["guild_id"], data={"code": row["code"]})

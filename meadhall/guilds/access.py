"""Load-and-authorise helpers for guilds and their rooms (house rule 2: `access_*` answers 404 for
what the caller may not see; `require_*` answers 403 for what they may see but not do)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import UserRow
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.clock import as_utc, iso
from meadhall.core.errors import AppError, permission_denied
from meadhall.core.ids import parse_id
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.rooms import queries as room_queries
from meadhall.guilds.rows import ChannelRow, GuildRow, MemberRow, OverrideRow, RoleRow
from meadhall.realtime.guild_state import GuildState, cached_state


@dataclass(frozen=True)
class GuildContext:
    """A guild seen by one caller: their membership, roles and guild-level permissions."""

    guild: GuildRow
    member: MemberRow | None  # None for an instance administrator who is not a member
    actor: perms.MemberContext
    roles: perms.GuildRoles
    role_rows: list[RoleRow]
    permissions: int
    now: datetime

    @property
    def guild_id(self) -> int:
        return int(self.guild["id"])

    @property
    def rank(self) -> int:
        return perms.actor_rank(self.actor, self.roles)


@dataclass(frozen=True)
class ChannelContext:
    guild: GuildContext
    channel: ChannelRow
    overrides: list[OverrideRow]
    permissions: int
    state: GuildState | None = None  # the permission data this was computed from, when cached
    caller: UserRow | None = None  # the caller's account row, when asked for (`with_caller`)

    @property
    def channel_id(self) -> int:
        return int(self.channel["id"])


def timed_out(member: MemberRow | None, now: datetime) -> bool:
    until = as_utc(member["timeout_until"]) if member else None
    return until is not None and until > now


def member_context(user_id: int, is_admin: bool, guild: GuildRow, member: MemberRow | None,
                   role_ids: list[int], now: datetime) -> perms.MemberContext:
    return perms.MemberContext(
        user_id=user_id,
        is_instance_admin=is_admin,
        is_member=member is not None,
        is_owner=guild["owner_id"] == user_id,
        role_ids=frozenset(role_ids),
        timed_out=timed_out(member, now),
    )


def to_overrides(rows: list[OverrideRow]) -> list[perms.Override]:
    return [perms.Override(r["target_id"], r["kind"], int(r["allow"]), int(r["deny"])) for r in rows]


def _context_from_state(principal: Principal, guild: GuildRow, state: GuildState, now: datetime
                        ) -> GuildContext | None:
    info = state.members.get(principal.user_id)
    if info is None and not principal.is_instance_admin:
        return None
    actor = state.context(principal.user_id, principal.is_instance_admin, now)
    # The cache holds RowMappings of these tables, typed here by the cast of guilds/rows.py (the member's
    # mapping also carries `is_instance_admin`, which no guild code reads from it).
    member = cast("MemberRow | None", info.row if info else None)
    return GuildContext(guild, member, actor, state.roles, cast("list[RoleRow]", state.role_rows),
                        int(perms.guild_permissions(actor, state.roles)), now)


async def load_guild_context(conn: AsyncConnection, principal: Principal, guild_id: int, now: datetime
                             ) -> GuildContext | None:
    """The caller's view of a guild: one query for the guild row, permission data from the cache."""
    guild = await guild_queries.select_guild(conn, guild_id)
    if guild is None:
        return None
    # kept by trigger: see derived registry "perm_version"
    state = await cached_state(conn, guild_id, int(guild["perm_version"]))
    return None if state is None else _context_from_state(principal, guild, state, now)


async def guild_context_of_row(conn: AsyncConnection, principal: Principal, guild: GuildRow, now: datetime
                               ) -> GuildContext | None:
    """The same from a guild row already read (READY reads the rows of all the user's guilds at once)."""
    state = await cached_state(conn, guild["id"], int(guild["perm_version"]))
    return None if state is None else _context_from_state(principal, guild, state, now)


async def access_guild(conn: AsyncConnection, principal: Principal, raw_id: str | int, now: datetime
                       ) -> GuildContext:
    """The guild if the caller is a member (or an instance administrator); else 404."""
    guild_id = parse_id(raw_id)
    gc = None if guild_id is None else await load_guild_context(conn, principal, guild_id, now)
    if gc is None:
        raise AppError("guild.not_found")
    return gc


# A plain int: `mask & perms.P.VIEW_CHANNEL` would go through the enum machinery on every request.
_VIEW_CHANNEL = int(perms.P.VIEW_CHANNEL)


def channel_permissions(gc: GuildContext, overrides: list[OverrideRow]) -> int:
    return int(perms.channel_permissions(gc.actor, gc.roles, to_overrides(overrides)))


async def access_guild_channel(conn: AsyncConnection, gc: GuildContext, raw_id: str | int) -> ChannelContext:
    """A room of this guild that the caller may view; else 404 `channel.not_found`."""
    channel_id = parse_id(raw_id)
    channel = None if channel_id is None else await room_queries.select_guild_channel(conn, gc.guild_id, channel_id)
    if channel is None:
        raise AppError("channel.not_found")
    overrides = await room_queries.select_overrides(conn, channel["id"])
    mask = channel_permissions(gc, overrides)
    if not mask & _VIEW_CHANNEL:
        raise AppError("channel.not_found")
    return ChannelContext(gc, channel, overrides, mask)


async def access_channel(conn: AsyncConnection, principal: Principal, raw_id: str | int, now: datetime, *,
                         with_caller: bool = False) -> ChannelContext:
    """A guild room by id alone (paths like /channels/{id}); 404 when missing or unseen."""
    cc = await visible_channel(conn, principal, raw_id, now, with_caller=with_caller)
    if cc is None:
        raise AppError("channel.not_found")
    return cc


async def visible_channel(conn: AsyncConnection, principal: Principal, raw_id: str | int, now: datetime, *,
                          with_caller: bool = False) -> ChannelContext | None:
    """A guild room by id alone, or None when missing or unseen (then it may be a conversation). One query for
    the room and its guild (and, `with_caller`, the caller's account row); permission data from the cache."""
    channel_id = parse_id(raw_id)
    found = None if channel_id is None else await room_queries.select_channel_with_guild(
        conn, channel_id, user_id=principal.user_id if with_caller else None)
    if found is None:
        return None
    channel, guild, caller = found
    state = await cached_state(conn, guild["id"], int(guild["perm_version"]))
    gc = None if state is None else _context_from_state(principal, guild, state, now)
    if gc is None or state is None:
        return None
    overrides = cast("list[OverrideRow]", state.overrides.get(channel["id"], []))
    mask = channel_permissions(gc, overrides)
    if not mask & _VIEW_CHANNEL:
        return None
    return ChannelContext(gc, channel, overrides, mask, state, caller)


def _deny(gc: GuildContext, flag: perms.Permission, where: str) -> AppError:
    if gc.actor.timed_out and gc.member is not None:
        return permission_denied(flag.name, f"You are timed out in this server {where}",
                                 timeout_until=iso(gc.member["timeout_until"]))
    return permission_denied(flag.name, f"Missing permission {flag.name} {where}")


def require(gc: GuildContext, flag: perms.Permission) -> None:
    """403 `perm.denied` naming the missing guild-level permission."""
    if not gc.permissions & int(flag):  # int: an operator on the flag goes through the enum machinery
        raise _deny(gc, flag, "in this server")


def require_in(cc: ChannelContext, flag: perms.Permission) -> None:
    """403 `perm.denied` naming the missing permission in this room."""
    if not cc.permissions & int(flag):
        raise _deny(cc.guild, flag, "in this room")


def visible_channels(gc: GuildContext, channel_rows: list[ChannelRow],
                     overrides: Mapping[int, list[OverrideRow]]) -> list[ChannelRow]:
    """Rooms the caller may view, and categories they may view or that hold a room they may view
    (docs/reference/permissions.md), in the given order."""
    viewable = {
        row["id"] for row in channel_rows
        if channel_permissions(gc, overrides.get(row["id"], [])) & perms.P.VIEW_CHANNEL
    }
    parents_with_visible_child = {row["parent_id"] for row in channel_rows if row["id"] in viewable}
    return [
        row for row in channel_rows
        if row["id"] in viewable or (row["type"] == "category" and row["id"] in parents_with_visible_child)
    ]

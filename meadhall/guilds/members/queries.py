"""SQL for memberships and the roles members hold. Never commits."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import RowMapping, and_, bindparam, case, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import UserRow
from meadhall.core.text import escape_like
from meadhall.db import dialect
from meadhall.db.schema import (
    guilds,
    member_roles,
    members,
    users,
)
from meadhall.guilds.rows import MemberRow, MemberWithUser

# The guilds of the user given as the bound parameter `user_id`, for statements built once that select through
# the user's memberships (READY) instead of binding a list of 100 guild ids per request.
USER_GUILD_IDS = select(members.c.guild_id).where(members.c.user_id == bindparam("user_id")).scalar_subquery()


async def count_memberships(conn: AsyncConnection, user_id: int) -> int:
    stmt = select(func.count()).select_from(members).where(members.c.user_id == user_id)
    return int((await conn.execute(stmt)).scalar_one())


# ---- members -----------------------------------------------------------------------------------


async def select_member(conn: AsyncConnection, guild_id: int, user_id: int) -> MemberRow | None:
    stmt = select(members).where(members.c.guild_id == guild_id, members.c.user_id == user_id)
    return cast("MemberRow | None", (await conn.execute(stmt)).mappings().first())


async def select_member_role_ids(conn: AsyncConnection, guild_id: int, user_id: int) -> list[int]:
    stmt = select(member_roles.c.role_id).where(
        member_roles.c.guild_id == guild_id, member_roles.c.user_id == user_id
    )
    return list((await conn.execute(stmt)).scalars())


async def select_role_ids_by_member(conn: AsyncConnection, guild_id: int, user_ids: Iterable[int] | None = None
                             ) -> dict[int, list[int]]:
    """user id -> held role ids for the whole guild (or the given members), in one query."""
    stmt = select(member_roles.c.user_id, member_roles.c.role_id).where(member_roles.c.guild_id == guild_id)
    if user_ids is not None:
        stmt = stmt.where(member_roles.c.user_id.in_(list(user_ids)))
    held: dict[int, list[int]] = defaultdict(list)
    for user_id, role_id in (await conn.execute(stmt)).all():
        held[user_id].append(role_id)
    return held


async def insert_member(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(members).values(values))


async def update_member_row(conn: AsyncConnection, guild_id: int, user_id: int, values: dict[str, Any]) -> None:
    await conn.execute(
        update(members).where(members.c.guild_id == guild_id, members.c.user_id == user_id).values(values)
    )


async def delete_member_row(conn: AsyncConnection, guild_id: int, user_id: int) -> bool:
    result = await conn.execute(
        delete(members).where(members.c.guild_id == guild_id, members.c.user_id == user_id)
    )
    return result.rowcount == 1


async def insert_member_role(conn: AsyncConnection, guild_id: int, user_id: int, role_id: int) -> None:
    await conn.execute(insert(member_roles).values(guild_id=guild_id, user_id=user_id, role_id=role_id))


async def delete_member_role_row(conn: AsyncConnection, guild_id: int, user_id: int, role_id: int) -> bool:
    result = await conn.execute(
        delete(member_roles).where(
            member_roles.c.guild_id == guild_id, member_roles.c.user_id == user_id, member_roles.c.role_id == role_id
        )
    )
    return result.rowcount == 1


async def select_members_with_users(conn: AsyncConnection, guild_id: int, *, after: int | None = None,
                             limit: int = 50, query_norm: str | None = None,
                             user_ids: list[int] | None = None) -> list[MemberWithUser]:
    """Members joined with their user rows (one query), user id ascending."""
    stmt = (
        select(members, *[c.label(_USER_PREFIX + c.name) for c in users.c])
        .join(users, users.c.id == members.c.user_id)
        .where(members.c.guild_id == guild_id)
    )
    if after is not None:
        stmt = stmt.where(members.c.user_id > after)
    if user_ids is not None:
        stmt = stmt.where(members.c.user_id.in_(user_ids))
    if query_norm:
        pattern = escape_like(query_norm) + "%"
        stmt = stmt.where(
            users.c.username_norm.like(pattern, escape="\\")
            | users.c.display_name_norm.like(pattern, escape="\\")
            | members.c.nick_norm.like(pattern, escape="\\")
        )
    stmt = stmt.order_by(members.c.user_id).limit(limit)
    return [_member_with_user(row) for row in (await conn.execute(stmt)).mappings()]


async def select_memberships_with_user(conn: AsyncConnection, user_id: int) -> list[MemberWithUser]:
    """One user's membership rows in every guild, each with the user's row: two queries, the user read once
    (a join repeated the user's whole row for each of 100 guilds)."""
    user = (await conn.execute(select(users).where(users.c.id == user_id))).mappings().first()
    if user is None:
        return []
    stmt = select(members).where(members.c.user_id == user_id).order_by(members.c.guild_id)
    return [MemberWithUser(cast(MemberRow, row), cast(UserRow, user))
            for row in (await conn.execute(stmt)).mappings()]


# Built once, as every profile change of a member runs it (building it cost more than running it): every member of
# every guild of the user, by guild then user id, the user's own rows carrying their membership's columns and a
# role id each (the other members' read NULL, so their table rows are never visited for them).
_ME = members.c.user_id == bindparam("user_id")
_PROFILE_AUDIENCES = (
    select(members.c.guild_id, members.c.user_id, case((_ME, members.c.nick)), case((_ME, members.c.joined_at)),
           case((_ME, members.c.timeout_until)), member_roles.c.role_id)
    .select_from(members.outerjoin(member_roles, and_(_ME, member_roles.c.guild_id == members.c.guild_id,
                                                      member_roles.c.user_id == members.c.user_id)))
    .where(members.c.guild_id.in_(USER_GUILD_IDS))
    .order_by(members.c.guild_id, members.c.user_id))


@dataclass(slots=True)
class ProfileAudience:
    """One guild of a user whose public profile changed: their membership there and who hears of it."""

    guild_id: int
    members: list[int]  # every member, the user included, by id
    role_ids: list[int]  # held by the user
    # The user's membership: the columns a Member object shows (set by their own row, which every guild has).
    membership: MemberRow | None = None


async def select_profile_audiences(conn: AsyncConnection, user_id: int) -> list[ProfileAudience]:
    """Every guild of the user with their membership, the role ids they hold and every member, by guild id, in
    one query (a member of 100 servers changing their custom status would otherwise pay two per guild)."""
    out: list[ProfileAudience] = []
    current = ProfileAudience(0, [], [])
    for guild_id, member_id, nick, joined_at, timeout_until, role_id in (
            await conn.execute(_PROFILE_AUDIENCES, {"user_id": user_id})).all():
        if guild_id != current.guild_id:
            current = ProfileAudience(guild_id, [], [])
            out.append(current)
        if not current.members or current.members[-1] != member_id:  # the user's row comes once per role
            current.members.append(member_id)
        if member_id == user_id:
            current.membership = cast(MemberRow, {"guild_id": guild_id, "nick": nick, "joined_at": joined_at,
                                                  "timeout_until": timeout_until})
            if role_id is not None:
                current.role_ids.append(role_id)
    return out


# Built once (every profile change runs it, through guilds/members/audiences.py).
_GUILD_VERSIONS_OF_USER = (select(members.c.guild_id, guilds.c.perm_version)
                           .join(guilds, guilds.c.id == members.c.guild_id)
                           .where(members.c.user_id == bindparam("user_id")).order_by(members.c.guild_id))


async def select_guild_versions_of_user(conn: AsyncConnection, user_id: int) -> tuple[tuple[int, int], ...]:
    """(guild id, permission version) of every guild of the user, by guild id: the versions change with every
    change of a guild's members, their roles or their rows (migration 0007)."""
    return tuple((guild_id, version) for guild_id, version in
                 (await conn.execute(_GUILD_VERSIONS_OF_USER, {"user_id": user_id})).all())


_USER_PREFIX = "u__"
_MEMBER_KEYS = tuple(c.name for c in members.c)
_USER_KEYS = tuple((c.name, _USER_PREFIX + c.name) for c in users.c)


def _member_with_user(row: RowMapping) -> MemberWithUser:
    """Split a joined row into dicts keyed by each table's columns (what the casts state)."""
    member = cast(MemberRow, {key: row[key] for key in _MEMBER_KEYS})
    return MemberWithUser(member, cast(UserRow, {name: row[label] for name, label in _USER_KEYS}))


async def insert_member_role_once(conn: AsyncConnection, guild_id: int, user_id: int, role_id: int) -> bool:
    """Assign a role unless held; True when a row was written (idempotent PUT, safe under races)."""
    stmt = dialect.insert_ignore(conn, member_roles, {"guild_id": guild_id, "user_id": user_id, "role_id": role_id})
    return (await conn.execute(stmt)).rowcount == 1

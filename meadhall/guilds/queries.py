"""SQL for guilds, roles, rooms, overrides and members. Child lookups are scoped by their parent
(house rule 6). Returns row mappings; never commits."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from sqlalchemy import RowMapping, and_, bindparam, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core.text import escape_like
from meadhall.db import dialect
from meadhall.db.schema import (
    channels,
    guild_bans,
    guilds,
    invites,
    member_roles,
    members,
    permission_overrides,
    roles,
    users,
)

Row = RowMapping


# ---- guilds ------------------------------------------------------------------------------------


async def get_guild(conn: AsyncConnection, guild_id: int) -> Row | None:
    return (await conn.execute(_GET_GUILD, {"guild_id": guild_id})).mappings().first()


async def lock_guild(conn: AsyncConnection, guild_id: int) -> None:
    """Serialise changes that renumber or count a guild's rows (PostgreSQL row lock; SQLite writers are
    serial already and ignore FOR UPDATE)."""
    await conn.execute(select(guilds.c.id).where(guilds.c.id == guild_id).with_for_update())


async def insert_guild(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(guilds).values(values))


async def update_guild(conn: AsyncConnection, guild_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(guilds).where(guilds.c.id == guild_id).values(values))


async def delete_guild(conn: AsyncConnection, guild_id: int) -> None:
    await conn.execute(delete(guilds).where(guilds.c.id == guild_id))


async def guilds_of_user(conn: AsyncConnection, user_id: int) -> list[Row]:
    stmt = (
        select(guilds)
        .join(members, members.c.guild_id == guilds.c.id)
        .where(members.c.user_id == user_id)
        .order_by(members.c.joined_at, guilds.c.id)
    )
    return list((await conn.execute(stmt)).mappings())


async def count_memberships(conn: AsyncConnection, user_id: int) -> int:
    stmt = select(func.count()).select_from(members).where(members.c.user_id == user_id)
    return int((await conn.execute(stmt)).scalar_one())


async def add_member_count(conn: AsyncConnection, guild_id: int, delta: int) -> None:
    await conn.execute(
        update(guilds).where(guilds.c.id == guild_id).values(member_count=guilds.c.member_count + delta)
    )


# ---- roles -------------------------------------------------------------------------------------


async def roles_of(conn: AsyncConnection, guild_id: int) -> list[Row]:
    stmt = select(roles).where(roles.c.guild_id == guild_id).order_by(roles.c.position, roles.c.id)
    return list((await conn.execute(stmt)).mappings())


async def get_role(conn: AsyncConnection, guild_id: int, role_id: int) -> Row | None:
    stmt = select(roles).where(roles.c.guild_id == guild_id, roles.c.id == role_id)
    return (await conn.execute(stmt)).mappings().first()


async def insert_roles(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    if rows:
        await conn.execute(insert(roles), rows)


async def update_role(conn: AsyncConnection, guild_id: int, role_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(roles).where(roles.c.guild_id == guild_id, roles.c.id == role_id).values(values))


async def delete_role(conn: AsyncConnection, guild_id: int, role_id: int) -> None:
    await conn.execute(delete(roles).where(roles.c.guild_id == guild_id, roles.c.id == role_id))


# ---- members -----------------------------------------------------------------------------------


async def get_member(conn: AsyncConnection, guild_id: int, user_id: int) -> Row | None:
    stmt = select(members).where(members.c.guild_id == guild_id, members.c.user_id == user_id)
    return (await conn.execute(stmt)).mappings().first()


async def member_role_ids(conn: AsyncConnection, guild_id: int, user_id: int) -> list[int]:
    stmt = select(member_roles.c.role_id).where(
        member_roles.c.guild_id == guild_id, member_roles.c.user_id == user_id
    )
    return list((await conn.execute(stmt)).scalars())


async def role_ids_by_member(conn: AsyncConnection, guild_id: int, user_ids: Iterable[int] | None = None
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


async def update_member(conn: AsyncConnection, guild_id: int, user_id: int, values: dict[str, Any]) -> None:
    await conn.execute(
        update(members).where(members.c.guild_id == guild_id, members.c.user_id == user_id).values(values)
    )


async def delete_member(conn: AsyncConnection, guild_id: int, user_id: int) -> bool:
    result = await conn.execute(
        delete(members).where(members.c.guild_id == guild_id, members.c.user_id == user_id)
    )
    return result.rowcount == 1


async def add_member_role(conn: AsyncConnection, guild_id: int, user_id: int, role_id: int) -> None:
    await conn.execute(insert(member_roles).values(guild_id=guild_id, user_id=user_id, role_id=role_id))


async def remove_member_role(conn: AsyncConnection, guild_id: int, user_id: int, role_id: int) -> bool:
    result = await conn.execute(
        delete(member_roles).where(
            member_roles.c.guild_id == guild_id, member_roles.c.user_id == user_id, member_roles.c.role_id == role_id
        )
    )
    return result.rowcount == 1


async def member_user_ids(conn: AsyncConnection, guild_id: int) -> list[int]:
    stmt = select(members.c.user_id).where(members.c.guild_id == guild_id).order_by(members.c.user_id)
    return list((await conn.execute(stmt)).scalars())


async def members_with_users(conn: AsyncConnection, guild_id: int, *, after: int | None = None,
                             limit: int = 50, query_norm: str | None = None,
                             user_ids: list[int] | None = None) -> list[Row]:
    """Members joined with their user rows (one query), user id ascending."""
    stmt = (
        select(members, users.c.id.label("u_id"), *[c.label(f"u_{c.name}") for c in users.c if c.name != "id"])
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
    return list((await conn.execute(stmt)).mappings())


def user_part(row: Row) -> dict[str, Any]:
    """The users columns of a `members_with_users` row, keyed as in the users table."""
    return {key[2:]: row[key] for key in row.keys() if key.startswith("u_")}


# ---- rooms and overrides -----------------------------------------------------------------------


async def channels_of(conn: AsyncConnection, guild_id: int) -> list[Row]:
    stmt = select(channels).where(channels.c.guild_id == guild_id).order_by(channels.c.position, channels.c.id)
    return list((await conn.execute(stmt)).mappings())


async def get_channel(conn: AsyncConnection, channel_id: int) -> Row | None:
    return (await conn.execute(select(channels).where(channels.c.id == channel_id))).mappings().first()


_CHANNEL_WITH_GUILD = (
    select(channels, *[c.label(f"g__{c.name}") for c in guilds.c])
    .join(guilds, guilds.c.id == channels.c.guild_id)
    .where(channels.c.id == bindparam("channel_id"))
)
# The same with the caller's own account row: a send shows its author, and this spares it a statement.
_CHANNEL_WITH_GUILD_AND_USER = (
    select(channels, *[c.label(f"g__{c.name}") for c in guilds.c], *[c.label(f"u__{c.name}") for c in users.c])
    .join(guilds, guilds.c.id == channels.c.guild_id)
    .outerjoin(users, users.c.id == bindparam("user_id"))
    .where(channels.c.id == bindparam("channel_id"))
)
_CHANNEL_KEYS = [(c.name, c.name) for c in channels.c]
_GUILD_KEYS = [(c.name, f"g__{c.name}") for c in guilds.c]
_USER_KEYS = [(c.name, f"u__{c.name}") for c in users.c]
_GET_GUILD = select(guilds).where(guilds.c.id == bindparam("guild_id"))


def _part(row: RowMapping, keys: list[tuple[str, str]]) -> dict[str, Any]:
    return {name: row[label] for name, label in keys}


async def get_channel_with_guild(conn: AsyncConnection, channel_id: int, *, user_id: int | None = None
                                 ) -> tuple[Row, Row, Row | None] | None:
    """A guild room, its guild and (when `user_id` is given) that user's row, in one prebuilt query (every
    room request starts here); None for unknown ids and conversations."""
    if user_id is None:
        row = (await conn.execute(_CHANNEL_WITH_GUILD, {"channel_id": channel_id})).mappings().first()
    else:
        row = (await conn.execute(_CHANNEL_WITH_GUILD_AND_USER,
                                  {"channel_id": channel_id, "user_id": user_id})).mappings().first()
    if row is None:
        return None
    user = None if user_id is None or row["u__id"] is None else _part(row, _USER_KEYS)
    return _part(row, _CHANNEL_KEYS), _part(row, _GUILD_KEYS), user  # type: ignore[return-value]


async def get_guild_channel(conn: AsyncConnection, guild_id: int, channel_id: int) -> Row | None:
    stmt = select(channels).where(channels.c.guild_id == guild_id, channels.c.id == channel_id)
    return (await conn.execute(stmt)).mappings().first()


async def insert_channel(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(channels).values(values))


async def update_channel(conn: AsyncConnection, channel_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(channels).where(channels.c.id == channel_id).values(values))


async def delete_channel(conn: AsyncConnection, channel_id: int) -> None:
    await conn.execute(delete(channels).where(channels.c.id == channel_id))


async def count_channels(conn: AsyncConnection, guild_id: int) -> int:
    stmt = select(func.count()).select_from(channels).where(channels.c.guild_id == guild_id)
    return int((await conn.execute(stmt)).scalar_one())


async def overrides_of_guild(conn: AsyncConnection, guild_id: int) -> dict[int, list[Row]]:
    """channel id -> its overrides, for every room of the guild in one query."""
    stmt = (
        select(permission_overrides)
        .join(channels, channels.c.id == permission_overrides.c.channel_id)
        .where(channels.c.guild_id == guild_id)
        .order_by(permission_overrides.c.channel_id, permission_overrides.c.target_id)
    )
    result: dict[int, list[Row]] = defaultdict(list)
    for row in (await conn.execute(stmt)).mappings():
        result[row["channel_id"]].append(row)
    return result


async def overrides_of_channel(conn: AsyncConnection, channel_id: int) -> list[Row]:
    stmt = (
        select(permission_overrides)
        .where(permission_overrides.c.channel_id == channel_id)
        .order_by(permission_overrides.c.target_id)
    )
    return list((await conn.execute(stmt)).mappings())


async def set_override(conn: AsyncConnection, channel_id: int, target_id: int, kind: str, allow: int,
                       deny: int) -> None:
    await conn.execute(
        delete(permission_overrides).where(
            permission_overrides.c.channel_id == channel_id, permission_overrides.c.target_id == target_id
        )
    )
    await conn.execute(
        insert(permission_overrides).values(channel_id=channel_id, target_id=target_id, kind=kind, allow=allow,
                                            deny=deny)
    )


async def insert_overrides(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    if rows:
        await conn.execute(insert(permission_overrides), rows)


async def delete_override(conn: AsyncConnection, channel_id: int, target_id: int) -> bool:
    result = await conn.execute(
        delete(permission_overrides).where(
            and_(permission_overrides.c.channel_id == channel_id, permission_overrides.c.target_id == target_id)
        )
    )
    return result.rowcount == 1


async def delete_overrides_for_target(conn: AsyncConnection, guild_id: int, target_id: int) -> list[int]:
    """Remove a role's (or member's) overrides in every room of the guild; returns the room ids."""
    room_ids = select(channels.c.id).where(channels.c.guild_id == guild_id)
    stmt = select(permission_overrides.c.channel_id).where(
        permission_overrides.c.target_id == target_id, permission_overrides.c.channel_id.in_(room_ids)
    )
    ids = list((await conn.execute(stmt)).scalars())
    if ids:
        await conn.execute(
            delete(permission_overrides).where(
                permission_overrides.c.target_id == target_id, permission_overrides.c.channel_id.in_(ids)
            )
        )
    return ids


# ---- roles: counts, holders, positions (members/roles services) --------------------------------


async def count_roles(conn: AsyncConnection, guild_id: int) -> int:
    """Every role of the guild, the default role included."""
    stmt = select(func.count()).select_from(roles).where(roles.c.guild_id == guild_id)
    return int((await conn.execute(stmt)).scalar_one())


async def shift_roles_up(conn: AsyncConnection, guild_id: int, from_position: int) -> None:
    """Move every non-default role at `from_position` or above up by one (makes room for a new role)."""
    await conn.execute(
        update(roles)
        .where(roles.c.guild_id == guild_id, roles.c.is_default.is_(False), roles.c.position >= from_position)
        .values(position=roles.c.position + 1)
    )


async def holders_of_role(conn: AsyncConnection, guild_id: int, role_id: int) -> list[int]:
    stmt = (
        select(member_roles.c.user_id)
        .where(member_roles.c.guild_id == guild_id, member_roles.c.role_id == role_id)
        .order_by(member_roles.c.user_id)
    )
    return list((await conn.execute(stmt)).scalars())


async def delete_role_assignments(conn: AsyncConnection, guild_id: int, role_id: int) -> None:
    await conn.execute(
        delete(member_roles).where(member_roles.c.guild_id == guild_id, member_roles.c.role_id == role_id)
    )


async def add_member_role_once(conn: AsyncConnection, guild_id: int, user_id: int, role_id: int) -> bool:
    """Assign a role unless held; True when a row was written (idempotent PUT, safe under races)."""
    stmt = dialect.insert_ignore(conn, member_roles, {"guild_id": guild_id, "user_id": user_id, "role_id": role_id})
    return (await conn.execute(stmt)).rowcount == 1


# ---- guild bans --------------------------------------------------------------------------------


async def get_ban(conn: AsyncConnection, guild_id: int, user_id: int) -> Row | None:
    stmt = select(guild_bans).where(guild_bans.c.guild_id == guild_id, guild_bans.c.user_id == user_id)
    return (await conn.execute(stmt)).mappings().first()


async def bans_of(conn: AsyncConnection, guild_id: int) -> list[Row]:
    """Newest first (ties by user id, newest-id first)."""
    stmt = (
        select(guild_bans)
        .where(guild_bans.c.guild_id == guild_id)
        .order_by(guild_bans.c.created_at.desc(), guild_bans.c.user_id.desc())
    )
    return list((await conn.execute(stmt)).mappings())


async def put_ban(conn: AsyncConnection, guild_id: int, user_id: int, reason: str | None, author_id: int,
                  now: Any) -> None:
    """Insert the ban, or update the reason and author of an existing one (its date stays)."""
    values = {"guild_id": guild_id, "user_id": user_id, "reason": reason, "author_id": author_id, "created_at": now}
    await conn.execute(dialect.upsert(conn, guild_bans, values, ["guild_id", "user_id"], ["reason", "author_id"]))


async def delete_ban(conn: AsyncConnection, guild_id: int, user_id: int) -> bool:
    result = await conn.execute(
        delete(guild_bans).where(guild_bans.c.guild_id == guild_id, guild_bans.c.user_id == user_id)
    )
    return result.rowcount == 1


async def users_by_id(conn: AsyncConnection, user_ids: Iterable[int]) -> dict[int, Row]:
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    return {row["id"]: row for row in (await conn.execute(select(users).where(users.c.id.in_(ids)))).mappings()}


async def public_invite_room(conn: AsyncConnection, guild_id: int) -> int | None:
    stmt = select(invites.c.channel_id).where(invites.c.guild_id == guild_id, invites.c.is_public.is_(True))
    return (await conn.execute(stmt)).scalar()


async def move_public_invite(conn: AsyncConnection, guild_id: int, from_channel: int, to_channel: int) -> None:
    await conn.execute(
        update(invites)
        .where(invites.c.guild_id == guild_id, invites.c.is_public.is_(True), invites.c.channel_id == from_channel)
        .values(channel_id=to_channel)
    )

"""SQL for roles and their holders. Never commits."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import (
    member_roles,
    roles,
)
from meadhall.guilds.rows import RoleRow

# ---- roles -------------------------------------------------------------------------------------


async def select_roles(conn: AsyncConnection, guild_id: int) -> list[RoleRow]:
    stmt = select(roles).where(roles.c.guild_id == guild_id).order_by(roles.c.position, roles.c.id)
    return cast("list[RoleRow]", list((await conn.execute(stmt)).mappings()))


async def select_role(conn: AsyncConnection, guild_id: int, role_id: int) -> RoleRow | None:
    stmt = select(roles).where(roles.c.guild_id == guild_id, roles.c.id == role_id)
    return cast("RoleRow | None", (await conn.execute(stmt)).mappings().first())


async def insert_roles(conn: AsyncConnection, rows: list[RoleRow]) -> None:
    if rows:
        await conn.execute(insert(roles), rows)


async def update_role_row(conn: AsyncConnection, guild_id: int, role_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(roles).where(roles.c.guild_id == guild_id, roles.c.id == role_id).values(values))


async def delete_role_row(conn: AsyncConnection, guild_id: int, role_id: int) -> None:
    await conn.execute(delete(roles).where(roles.c.guild_id == guild_id, roles.c.id == role_id))


# ---- roles: counts, holders, positions (members/roles services) --------------------------------


async def count_roles(conn: AsyncConnection, guild_id: int) -> int:
    """Every role of the guild, the default role included."""
    stmt = select(func.count()).select_from(roles).where(roles.c.guild_id == guild_id)
    return int((await conn.execute(stmt)).scalar_one())


async def update_role_positions_up(conn: AsyncConnection, guild_id: int, from_position: int) -> None:
    """Move every non-default role at `from_position` or above up by one (makes room for a new role)."""
    await conn.execute(
        update(roles)
        .where(roles.c.guild_id == guild_id, roles.c.is_default.is_(False), roles.c.position >= from_position)
        .values(position=roles.c.position + 1)
    )


async def select_role_holders(conn: AsyncConnection, guild_id: int, role_id: int) -> list[int]:
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

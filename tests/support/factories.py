"""Database-level factories and reads: rows written or read directly, for states the API cannot reach
quickly (instance administrators, raw memberships, roles with chosen ids) and for checking what was stored."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, insert, select, update

from meadhall.db.schema import (
    audit_log,
    channels,
    files,
    guilds,
    member_roles,
    members,
    messages,
    roles,
    users,
)
from meadhall.guilds.members.service import do_add_member
from meadhall.guilds.queries import select_guild


async def add_member(rt: Any, guild_id: str | int, account: Any) -> None:
    """Make `account` a member through the service, as an accepted invitation would (MEMBER_ADD,
    GUILD_CREATE, the system message)."""
    async with rt.uow() as uow:
        guild = await select_guild(uow.conn, int(guild_id))
        assert guild is not None
        await do_add_member(uow, guild, int(account.id), via="invite")


async def insert_member(rt: Any, guild_id: str | int, user_id: str | int) -> None:
    """A membership row written directly: no events, no system message, no audit entry."""
    async with rt.engine.begin() as conn:
        await conn.execute(insert(members).values(guild_id=int(guild_id), user_id=int(user_id), nick=None,
                                                  nick_norm=None, joined_at=rt.clock.now(), timeout_until=None))
        await conn.execute(update(guilds).where(guilds.c.id == int(guild_id))
                           .values(member_count=guilds.c.member_count + 1))


async def insert_role(rt: Any, clock: Any, guild_id: str | int, role_id: int, mask: Any, position: int,
                      holders: Any = ()) -> int:
    """A role row with a chosen id and position, held by `holders` (no events, no audit entry)."""
    async with rt.engine.begin() as conn:
        await conn.execute(insert(roles).values(
            id=role_id, guild_id=int(guild_id), name=f"r{role_id}", color=0, position=position,
            permissions=int(mask), hoist=False, is_default=False, created_at=clock.now()))
        for account in holders:
            await conn.execute(insert(member_roles).values(guild_id=int(guild_id), user_id=int(account.id),
                                                           role_id=role_id))
    return role_id


async def update_default_permissions(rt: Any, guild_id: str | int, mask: Any) -> None:
    """The default role's permission mask written directly (no events, no audit entry)."""
    async with rt.engine.begin() as conn:
        await conn.execute(update(roles).where(roles.c.id == int(guild_id)).values(permissions=int(mask)))


async def make_admin(rt: Any, account: Any) -> None:
    """Instance administrator by SQL (the grant endpoint belongs to instance administration)."""
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(account.id)).values(is_instance_admin=True))


async def time_out(rt: Any, guild_id: str, account: Any, until: Any) -> None:
    async with rt.engine.begin() as conn:
        await conn.execute(update(members).where(members.c.guild_id == int(guild_id),
                                                 members.c.user_id == int(account.id)).values(timeout_until=until))


async def audit_rows(rt: Any, guild_id: str | int, action: str | None = None) -> list[dict[str, Any]]:
    stmt = select(audit_log).where(audit_log.c.guild_id == int(guild_id)).order_by(audit_log.c.id)
    if action is not None:
        stmt = stmt.where(audit_log.c.action == action)
    async with rt.engine.connect() as conn:
        return [dict(r) for r in (await conn.execute(stmt)).mappings()]


async def channel_row(rt: Any, channel_id: str) -> Any:
    async with rt.engine.connect() as conn:
        return (await conn.execute(select(channels).where(channels.c.id == int(channel_id)))).mappings().one()


async def message_count(rt: Any, channel_id: str) -> int:
    async with rt.engine.connect() as conn:
        return (await conn.execute(select(func.count()).select_from(messages)
                                   .where(messages.c.channel_id == int(channel_id)))).scalar_one()


async def file_ids(rt: Any) -> list[int]:
    """The ids of every stored file row, oldest first."""
    async with rt.engine.connect() as conn:
        return [r.id for r in await conn.execute(select(files.c.id).order_by(files.c.id))]

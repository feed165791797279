"""SQL of the realtime layer, none of which commits: the permission state of a guild
(realtime/guild_state.py, five statements), a guild's member ids (the audience of guild events) and the event
outbox's claims (realtime/outbox.py)."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import RowMapping, delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import channels, guilds, member_roles, members, permission_overrides, roles, users
from meadhall.db.schema.outbox import event_outbox

_ANY_OUTBOX_ROW = select(event_outbox.c.id).limit(1)


async def select_guild_member_ids(conn: AsyncConnection, guild_id: int) -> list[int]:
    """Every member of the guild, user id ascending."""
    stmt = select(members.c.user_id).where(members.c.guild_id == guild_id).order_by(members.c.user_id)
    return list((await conn.execute(stmt)).scalars())


async def select_outbox_pending(conn: AsyncConnection) -> bool:
    """Whether any event waits in the outbox: one read of at most one key."""
    return (await conn.execute(_ANY_OUTBOX_ROW)).first() is not None


async def delete_outbox_batch(conn: AsyncConnection, batch: int) -> list[RowMapping]:
    """Claim (delete) the oldest `batch` rows, returning their id, created_at and body in id order."""
    stmt = (delete(event_outbox)
            .where(event_outbox.c.id.in_(select(event_outbox.c.id).order_by(event_outbox.c.id).limit(batch)))
            .returning(event_outbox.c.id, event_outbox.c.created_at, event_outbox.c.body))
    return sorted((await conn.execute(stmt)).mappings(), key=lambda row: row["id"])


async def select_perm_head(conn: AsyncConnection, guild_id: int) -> tuple[int, int] | None:
    """(perm_version, owner_id) of the guild, or None when there is no such guild."""
    # kept by trigger: see derived registry "perm_version"
    head = (await conn.execute(
        select(guilds.c.perm_version, guilds.c.owner_id).where(guilds.c.id == guild_id)
    )).first()
    return None if head is None else (int(head[0]), int(head[1]))


async def select_members_with_admin_flag(conn: AsyncConnection, guild_id: int) -> list[RowMapping]:
    """The guild's members rows, each with its user's `is_instance_admin`."""
    return list((await conn.execute(
        select(members, users.c.is_instance_admin).join(users, users.c.id == members.c.user_id)
        .where(members.c.guild_id == guild_id)
    )).mappings().all())


async def select_held_roles(conn: AsyncConnection, guild_id: int) -> dict[int, set[int]]:
    """user id -> the ids of the roles they hold in the guild."""
    held: dict[int, set[int]] = defaultdict(set)
    for user_id, role_id in (await conn.execute(
        select(member_roles.c.user_id, member_roles.c.role_id).where(member_roles.c.guild_id == guild_id)
    )).all():
        held[user_id].add(role_id)
    return held


async def select_roles_in_order(conn: AsyncConnection, guild_id: int) -> list[RowMapping]:
    return list((await conn.execute(
        select(roles).where(roles.c.guild_id == guild_id).order_by(roles.c.position, roles.c.id)
    )).mappings())


async def select_overrides_by_room(conn: AsyncConnection, guild_id: int) -> dict[int, list[RowMapping]]:
    """room id -> the permission overrides of the guild's room, by target id."""
    overrides: dict[int, list[RowMapping]] = defaultdict(list)
    for row in (await conn.execute(
        select(permission_overrides).join(channels, channels.c.id == permission_overrides.c.channel_id)
        .where(channels.c.guild_id == guild_id).order_by(permission_overrides.c.target_id)
    )).mappings():
        overrides[row["channel_id"]].append(row)
    return dict(overrides)

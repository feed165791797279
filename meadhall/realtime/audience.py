"""Who may receive an event, as user ids (house rule 4). Each function reads what it needs in a few
queries for the whole audience, never one per receiver."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core import permissions as perms
from meadhall.core.clock import as_utc
from meadhall.db.schema import channels, guilds, member_roles, members, permission_overrides, roles, users


def only(user_id: int) -> list[int]:
    """Events about a user's own account (USER_UPDATE, SESSION_INVALIDATED, READ_STATE_UPDATE)."""
    return [user_id]


async def guild_members(conn: AsyncConnection, guild_id: int) -> list[int]:
    """Every member of the guild (GUILD_*, MEMBER_*, ROLE_*, VOICE_STATE_UPDATE ...)."""
    stmt = select(members.c.user_id).where(members.c.guild_id == guild_id).order_by(members.c.user_id)
    return list((await conn.execute(stmt)).scalars())


class GuildViewers:
    """Computes, for one guild, which members may view each room (API.md 4.6: per receiver, at
    dispatch time). Loads members, their roles, the guild's roles and overrides once."""

    def __init__(self, guild_id: int, owner_id: int, contexts: list[perms.MemberContext],
                 guild_roles: perms.GuildRoles, overrides: dict[int, list[perms.Override]]) -> None:
        self.guild_id = guild_id
        self.owner_id = owner_id
        self.contexts = contexts
        self.roles = guild_roles
        self.overrides = overrides

    @classmethod
    async def load(cls, conn: AsyncConnection, guild_id: int, now: datetime) -> GuildViewers:
        owner_id = (await conn.execute(select(guilds.c.owner_id).where(guilds.c.id == guild_id))).scalar_one()
        member_rows = (
            await conn.execute(
                select(members.c.user_id, members.c.timeout_until, users.c.is_instance_admin)
                .join(users, users.c.id == members.c.user_id)
                .where(members.c.guild_id == guild_id)
            )
        ).all()
        held: dict[int, set[int]] = defaultdict(set)
        for user_id, role_id in (
            await conn.execute(select(member_roles.c.user_id, member_roles.c.role_id)
                               .where(member_roles.c.guild_id == guild_id))
        ).all():
            held[user_id].add(role_id)
        role_rows = (
            await conn.execute(select(roles.c.id, roles.c.permissions, roles.c.position)
                               .where(roles.c.guild_id == guild_id))
        ).all()
        guild_roles = perms.GuildRoles(guild_id, {r[0]: int(r[1]) for r in role_rows},
                                       {r[0]: int(r[2]) for r in role_rows})
        overrides: dict[int, list[perms.Override]] = defaultdict(list)
        for row in (
            await conn.execute(
                select(permission_overrides)
                .join(channels, channels.c.id == permission_overrides.c.channel_id)
                .where(channels.c.guild_id == guild_id)
            )
        ).mappings():
            overrides[row["channel_id"]].append(
                perms.Override(row["target_id"], row["kind"], int(row["allow"]), int(row["deny"]))
            )
        contexts = []
        for user_id, timeout_until, is_admin in member_rows:
            until = as_utc(timeout_until)
            contexts.append(perms.MemberContext(
                user_id=user_id, is_instance_admin=bool(is_admin), is_member=True, is_owner=user_id == owner_id,
                role_ids=frozenset(held.get(user_id, ())), timed_out=until is not None and until > now,
            ))
        return cls(guild_id, owner_id, contexts, guild_roles, overrides)

    def members(self) -> list[int]:
        return sorted(c.user_id for c in self.contexts)

    def viewers(self, channel_id: int) -> list[int]:
        room = self.overrides.get(channel_id, [])
        return sorted(
            c.user_id for c in self.contexts
            if perms.channel_permissions(c, self.roles, room) & perms.P.VIEW_CHANNEL
        )


async def channel_viewers(conn: AsyncConnection, guild_id: int, channel_id: int, now: datetime) -> list[int]:
    """Members who may view one room (CHANNEL_*, MESSAGE_*, TYPING_START, CHANNEL_PINS_UPDATE)."""
    return (await GuildViewers.load(conn, guild_id, now)).viewers(channel_id)

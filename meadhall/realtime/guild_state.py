"""Everything that decides permissions in one guild, loaded in five queries and cached per process
under the guild's `perm_version` (kept current by database triggers, see migration 0007).

A cached state is used only while the version read in the current transaction equals the one it was
loaded under, so a change made by any node or process invalidates it at once. States are stored only
from transactions that have not changed permission data themselves (their version may never commit).
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import RowMapping, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core import permissions as perms
from meadhall.core.clock import as_utc
from meadhall.db.engine import WROTE_FLAG, engine_token
from meadhall.db.schema import channels, guilds, member_roles, members, permission_overrides, roles, users

MAX_CACHED_GUILDS = 4096


@dataclass(frozen=True)
class MemberInfo:
    row: RowMapping  # the members row (nick, joined_at, timeout_until)
    role_ids: frozenset[int]
    is_instance_admin: bool

    def timed_out(self, now: datetime) -> bool:
        until = as_utc(self.row["timeout_until"])
        return until is not None and until > now


@dataclass(frozen=True)
class GuildState:
    guild_id: int
    version: int
    owner_id: int
    role_rows: list[RowMapping]
    roles: perms.GuildRoles
    members: dict[int, MemberInfo]
    overrides: dict[int, list[RowMapping]]
    # Viewers per room, computed once per state: a timeout keeps VIEW_CHANNEL (permissions.TIMEOUT_MASK),
    # so who may view a room does not depend on the time, only on this (immutable) permission data.
    _viewers: dict[int, tuple[int, ...]] = field(default_factory=dict, compare=False, repr=False)

    def context(self, user_id: int, is_instance_admin: bool, now: datetime) -> perms.MemberContext:
        info = self.members.get(user_id)
        return perms.MemberContext(
            user_id=user_id,
            is_instance_admin=is_instance_admin,
            is_member=info is not None,
            is_owner=user_id == self.owner_id,
            role_ids=info.role_ids if info else frozenset(),
            timed_out=info.timed_out(now) if info else False,
        )

    def channel_overrides(self, channel_id: int) -> list[perms.Override]:
        return [perms.Override(o["target_id"], o["kind"], int(o["allow"]), int(o["deny"]))
                for o in self.overrides.get(channel_id, [])]

    def contexts(self, now: datetime) -> list[perms.MemberContext]:
        return [self.context(uid, info.is_instance_admin, now) for uid, info in self.members.items()]

    def viewers(self, channel_id: int, now: datetime) -> list[int]:
        """Members who may view the room (instance administrators only where they are members)."""
        found = self._viewers.get(channel_id)
        if found is None:
            found = self._viewers[channel_id] = tuple(
                viewers_of(self.contexts(now), self.roles, self.channel_overrides(channel_id)))
        return list(found)


def viewers_of(contexts: list[perms.MemberContext], roles: perms.GuildRoles,
               overrides: list[perms.Override]) -> list[int]:
    """The user ids among `contexts` that hold VIEW_CHANNEL in a room with these overrides."""
    return sorted(
        c.user_id for c in contexts if perms.channel_permissions(c, roles, overrides) & perms.P.VIEW_CHANNEL
    )


# Keyed by (engine token, guild id): two databases never share cache entries.
_CACHE: OrderedDict[tuple[int, int], GuildState] = OrderedDict()


async def load_state(conn: AsyncConnection, guild_id: int) -> GuildState | None:
    head = (await conn.execute(
        select(guilds.c.perm_version, guilds.c.owner_id).where(guilds.c.id == guild_id)
    )).first()
    if head is None:
        return None
    member_rows = (await conn.execute(
        select(members, users.c.is_instance_admin).join(users, users.c.id == members.c.user_id)
        .where(members.c.guild_id == guild_id)
    )).mappings().all()
    held: dict[int, set[int]] = defaultdict(set)
    for user_id, role_id in (await conn.execute(
        select(member_roles.c.user_id, member_roles.c.role_id).where(member_roles.c.guild_id == guild_id)
    )).all():
        held[user_id].add(role_id)
    role_rows = list((await conn.execute(
        select(roles).where(roles.c.guild_id == guild_id).order_by(roles.c.position, roles.c.id)
    )).mappings())
    overrides: dict[int, list[RowMapping]] = defaultdict(list)
    for row in (await conn.execute(
        select(permission_overrides).join(channels, channels.c.id == permission_overrides.c.channel_id)
        .where(channels.c.guild_id == guild_id).order_by(permission_overrides.c.target_id)
    )).mappings():
        overrides[row["channel_id"]].append(row)
    return GuildState(
        guild_id=guild_id,
        version=int(head[0]),
        owner_id=int(head[1]),
        role_rows=role_rows,
        roles=perms.GuildRoles(guild_id, {r["id"]: int(r["permissions"]) for r in role_rows},
                               {r["id"]: int(r["position"]) for r in role_rows}),
        members={
            m["user_id"]: MemberInfo(m, frozenset(held.get(m["user_id"], ())), bool(m["is_instance_admin"]))
            for m in member_rows
        },
        overrides=dict(overrides),
    )


async def cached_state(conn: AsyncConnection, guild_id: int, version: int, *, store: bool = True
                       ) -> GuildState | None:
    """The state at `version` (read by the caller in this transaction), from the cache when current."""
    key = (engine_token(conn), guild_id)
    state = _CACHE.get(key)
    if state is not None and state.version == version:
        _CACHE.move_to_end(key)
        return state
    state = await load_state(conn, guild_id)
    # A transaction that already wrote may hold a version that never commits: use, don't keep.
    if state is not None and store and state.version == version and not conn.info.get(WROTE_FLAG):
        _CACHE[key] = state
        if len(_CACHE) > MAX_CACHED_GUILDS:
            _CACHE.popitem(last=False)
    return state

"""Everything that decides permissions in one guild, loaded in five queries (realtime/queries.py) and cached
per process under the guild's `perm_version` (kept by triggers: see derived registry "perm_version" and the
cache "guild_states", db/derived.py).

A cached state is used only while the version read in the current transaction equals the one it was
loaded under, so a change made by any node or process invalidates it at once. States are stored only
from transactions that have not changed permission data themselves (their version may never commit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core import permissions as perms
from meadhall.core.clock import as_utc
from meadhall.db.kept import VersionedCache
from meadhall.realtime import queries


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


# Keyed by guild id (per engine: two databases never share entries), under the guild's permission version.
STATES: VersionedCache[int, int, GuildState] = VersionedCache("guild_states")


async def load_state(conn: AsyncConnection, guild_id: int) -> GuildState | None:
    head = await queries.select_perm_head(conn, guild_id)
    if head is None:
        return None
    member_rows = await queries.select_members_with_admin_flag(conn, guild_id)
    held = await queries.select_held_roles(conn, guild_id)
    role_rows = await queries.select_roles_in_order(conn, guild_id)
    overrides = await queries.select_overrides_by_room(conn, guild_id)
    return GuildState(
        guild_id=guild_id,
        version=head[0],
        owner_id=head[1],
        role_rows=role_rows,
        roles=perms.GuildRoles(guild_id, {r["id"]: int(r["permissions"]) for r in role_rows},
                               {r["id"]: int(r["position"]) for r in role_rows}),
        members={
            m["user_id"]: MemberInfo(m, frozenset(held.get(m["user_id"], ())), bool(m["is_instance_admin"]))
            for m in member_rows
        },
        overrides=overrides,
    )


async def cached_state(conn: AsyncConnection, guild_id: int, version: int, *, store: bool = True
                       ) -> GuildState | None:
    """The state at `version` (read by the caller in this transaction), from the cache when current."""
    state = STATES.get(conn, guild_id, version)
    if state is not None:
        return state
    state = await load_state(conn, guild_id)
    # Kept only at the version the caller read (the cache itself refuses what a writing transaction read).
    if state is not None and store and state.version == version:
        STATES.put(conn, guild_id, version, state)
    return state

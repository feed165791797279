"""Who may receive an event, as user ids (house rule 4). Each function reads what it needs in a few
queries for the whole audience, never one per receiver."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core import permissions as perms
from meadhall.realtime.guild_state import GuildState, load_state, viewers_of
from meadhall.realtime.queries import select_guild_member_ids


def only(user_id: int) -> list[int]:
    """Events about a user's own account (USER_UPDATE, SESSION_INVALIDATED, READ_STATE_UPDATE)."""
    return [user_id]


async def guild_members(conn: AsyncConnection, guild_id: int) -> list[int]:
    """Every member of the guild (GUILD_*, MEMBER_*, ROLE_*, VOICE_STATE_UPDATE ...)."""
    return await select_guild_member_ids(conn, guild_id)


class GuildViewers:
    """Which members may view each room of one guild (docs/reference/events.md: per receiver, at dispatch time),
    from freshly loaded permission data (use after a transaction changed it). `contexts` may be
    narrowed to a subset of members."""

    def __init__(self, guild_id: int, owner_id: int, contexts: list[perms.MemberContext],
                 guild_roles: perms.GuildRoles, overrides: dict[int, list[perms.Override]]) -> None:
        self.guild_id = guild_id
        self.owner_id = owner_id
        self.contexts = contexts
        self.roles = guild_roles
        self.overrides = overrides

    @classmethod
    def from_state(cls, state: GuildState, now: datetime) -> GuildViewers:
        overrides = {cid: state.channel_overrides(cid) for cid in state.overrides}
        return cls(state.guild_id, state.owner_id, state.contexts(now), state.roles, overrides)

    @classmethod
    async def load(cls, conn: AsyncConnection, guild_id: int, now: datetime) -> GuildViewers:
        state = await load_state(conn, guild_id)
        assert state is not None, f"guild {guild_id} does not exist"
        return cls.from_state(state, now)

    def members(self) -> list[int]:
        return sorted(c.user_id for c in self.contexts)

    def viewers(self, channel_id: int) -> list[int]:
        return viewers_of(self.contexts, self.roles, self.overrides.get(channel_id, []))


async def channel_viewers(conn: AsyncConnection, guild_id: int, channel_id: int, now: datetime) -> list[int]:
    """Members who may view one room (CHANNEL_*, MESSAGE_*, TYPING_START, CHANNEL_PINS_UPDATE)."""
    return (await GuildViewers.load(conn, guild_id, now)).viewers(channel_id)

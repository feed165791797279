"""GuildSnapshot (docs/reference/events.md, GUILD_CREATE): the guild as one member sees it, for GUILD_CREATE and READY."""

from __future__ import annotations

from typing import Any

from meadhall.accounts import queries as account_queries
from meadhall.auth.sessions import Principal
from meadhall.db.uow import UnitOfWork
from meadhall.guilds.access import GuildContext, load_guild_context, visible_channels
from meadhall.guilds.members.views import member_view
from meadhall.guilds.roles.views import role_view
from meadhall.guilds.rooms import queries as room_queries
from meadhall.guilds.rooms.views import channel_view
from meadhall.guilds.views import guild_view


async def snapshot_for(uow: UnitOfWork, gc: GuildContext) -> dict[str, Any]:
    conn = uow.conn
    channel_rows = await room_queries.select_channels(conn, gc.guild_id)
    overrides = await room_queries.select_guild_overrides(conn, gc.guild_id)
    member: dict[str, Any] | None = None
    if gc.member is not None:
        user = await account_queries.select_user(conn, gc.actor.user_id)
        assert user is not None
        member = member_view(gc.member, user, sorted(gc.actor.role_ids), gc.now)
    return {
        **guild_view(gc.guild),
        "roles": [role_view(r) for r in gc.role_rows],
        "channels": [channel_view(c, overrides.get(c["id"], [])) for c in visible_channels(gc, channel_rows, overrides)],
        "emojis": [],
        "sounds": [],
        "cosmetics": [],
        "voice_states": [],
        "member": member,
    }


async def snapshot_of(uow: UnitOfWork, guild_id: int, user_id: int, is_admin: bool = False) -> dict[str, Any]:
    principal = Principal(user_id, 0, is_admin, False, None)
    gc = await load_guild_context(uow.conn, principal, guild_id, uow.now)
    assert gc is not None
    return await snapshot_for(uow, gc)

"""GuildSnapshot (docs/reference/events.md, GUILD_CREATE): the guild as one member sees it, for GUILD_CREATE and READY."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from meadhall.accounts import queries as account_queries
from meadhall.accounts.queries import UserRow
from meadhall.accounts.views import UserSummaryView, user_summary
from meadhall.auth.sessions import Principal
from meadhall.db.uow import UnitOfWork
from meadhall.guilds.access import GuildContext, guild_context_of_row, load_guild_context, visible_channels
from meadhall.guilds.cosmetics.queries import select_cosmetics_of_guilds, select_cosmetics_of_user_guilds
from meadhall.guilds.cosmetics.views import cosmetic_view
from meadhall.guilds.emojis.queries import select_emojis_of_guilds, select_emojis_of_user_guilds
from meadhall.guilds.emojis.views import emoji_view
from meadhall.guilds.members.views import MemberView, member_view
from meadhall.guilds.roles.views import role_view
from meadhall.guilds.rooms import queries as room_queries
from meadhall.guilds.rooms.views import channel_view
from meadhall.guilds.rows import ChannelRow, GuildRow, OverrideRow
from meadhall.guilds.sounds.queries import select_sounds_of_guilds, select_sounds_of_user_guilds
from meadhall.guilds.sounds.views import sound_view
from meadhall.guilds.views import guild_view


async def snapshot_for(uow: UnitOfWork, gc: GuildContext) -> dict[str, Any]:
    conn = uow.conn
    channel_rows = await room_queries.select_channels(conn, gc.guild_id)
    overrides = await room_queries.select_guild_overrides(conn, gc.guild_id)
    user = await account_queries.select_user(conn, gc.actor.user_id) if gc.member is not None else None
    return _snapshot(gc, channel_rows, overrides, user, await _collections(uow, [gc.guild_id]))


async def _collections(uow: UnitOfWork, guild_ids: list[int]) -> dict[int, dict[str, list[dict[str, Any]]]]:
    """guild id -> its emojis, sounds and cosmetics gallery, for all the guilds in three queries."""
    emojis = await select_emojis_of_guilds(uow.conn, guild_ids)
    sounds = await select_sounds_of_guilds(uow.conn, guild_ids)
    cosmetics = await select_cosmetics_of_guilds(uow.conn, guild_ids)
    return {g: {"emojis": [emoji_view(r) for r in emojis[g]], "sounds": [sound_view(r) for r in sounds[g]],
                "cosmetics": [cosmetic_view(r) for r in cosmetics[g]]} for g in guild_ids}


async def _collections_of_user(uow: UnitOfWork, user_id: int, guild_ids: list[int]
                               ) -> dict[int, dict[str, list[dict[str, Any]]]]:
    """The same for every guild of the user (READY), selected through the user's memberships."""
    emojis = await select_emojis_of_user_guilds(uow.conn, user_id)
    sounds = await select_sounds_of_user_guilds(uow.conn, user_id)
    cosmetics = await select_cosmetics_of_user_guilds(uow.conn, user_id)
    return {g: {"emojis": [emoji_view(r) for r in emojis.get(g, ())],
                "sounds": [sound_view(r) for r in sounds.get(g, ())],
                "cosmetics": [cosmetic_view(r) for r in cosmetics.get(g, ())]} for g in guild_ids}


def _snapshot(gc: GuildContext, channel_rows: list[ChannelRow], overrides: Mapping[int, list[OverrideRow]],
              user: UserRow | None, collections: Mapping[int, dict[str, list[dict[str, Any]]]],
              summary: UserSummaryView | None = None) -> dict[str, Any]:
    member: MemberView | None = None
    if gc.member is not None and user is not None:
        member = member_view(gc.member, user, sorted(gc.actor.role_ids), gc.now, summary)
    # Completed in place rather than copied into a new dict (a READY makes one per guild); the keys
    # keep this order on the wire.
    snapshot = guild_view(gc.guild)
    snapshot["roles"] = [role_view(r) for r in gc.role_rows]
    snapshot["channels"] = [channel_view(c, overrides.get(c["id"], []))
                            for c in visible_channels(gc, channel_rows, overrides)]
    snapshot.update(collections[gc.guild_id])
    snapshot["voice_states"] = []
    snapshot["member"] = member
    return snapshot


async def snapshot_of(uow: UnitOfWork, guild_id: int, user_id: int, is_admin: bool = False) -> dict[str, Any]:
    principal = Principal(user_id, 0, is_admin, False, None)
    gc = await load_guild_context(uow.conn, principal, guild_id, uow.now)
    assert gc is not None
    return await snapshot_for(uow, gc)


async def snapshots_of_user(uow: UnitOfWork, guild_rows: list[GuildRow], user: UserRow, is_admin: bool
                            ) -> list[dict[str, Any]]:
    """The snapshots of all the user's guilds (READY): rooms and overrides of every guild in two queries,
    emojis, sounds and cosmetics in three, permission data from the cache, instead of queries per guild. The
    guild rows are the user's memberships (guilds.queries.select_guilds_of_user), so these queries select
    through them rather than by a list of the guilds' ids."""
    conn = uow.conn
    principal = Principal(user["id"], 0, is_admin, False, None)
    ids = [int(g["id"]) for g in guild_rows]
    rooms = await room_queries.select_channels_of_user_guilds(conn, principal.user_id)
    overrides = await room_queries.select_overrides_of_user_guilds(conn, principal.user_id)
    summary = user_summary(user, uow.now)  # the member of every snapshot: made once
    collections = await _collections_of_user(uow, principal.user_id, ids)
    out = []
    for guild in guild_rows:
        gc = await guild_context_of_row(conn, principal, guild, uow.now)
        if gc is not None:
            out.append(_snapshot(gc, rooms.get(gc.guild_id, []), overrides, user, collections,
                                 summary))
    return out

"""Personal styles (OpenAPI: getMyStyles, setMyStyle, deleteMyStyle; docs/customisation.md): a frame, an
icon and a name colour per scope, `guild` (how the members of one server see you) or `friends`.

Available items: in a guild, the gallery items shown by the roles the user holds there (the default role
included); for friends, those of all the user's guilds together. A choice that stops being available is
kept and shown as null. A guild-scope change reaches the guild's members (MEMBER_UPDATE with `style`), a
friends-scope change the user's friends (PRESENCE_UPDATE with `style`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts import queries as account_queries
from meadhall.accounts.events import presence_view
from meadhall.accounts.presence import friends_of
from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError, validation_error
from meadhall.core.ids import parse_id
from meadhall.db.uow import UnitOfWork
from meadhall.guilds.access import access_guild
from meadhall.guilds.cosmetics.queries import CosmeticRow, select_cosmetics_by_ids
from meadhall.guilds.cosmetics.views import cosmetic_view
from meadhall.guilds.members import queries as member_queries
from meadhall.guilds.members.events import notify_member
from meadhall.guilds.members.views import member_view
from meadhall.guilds.styles import queries
from meadhall.guilds.styles.queries import FRIENDS, StyleRow
from meadhall.guilds.styles.views import style_view
from meadhall.realtime.audience import guild_members
from meadhall.realtime.events import EventType, event
from meadhall.runtime import Runtime


async def _available(conn: AsyncConnection, user_id: int) -> tuple[dict[int, CosmeticRow], dict[int, list[int]]]:
    """(every available item by id, guild id -> the ids available there) for the user's guilds."""
    held = await queries.select_role_cosmetic_ids(conn, [user_id])
    items = await select_cosmetics_by_ids(conn, set().union(*held.values()) if held else set())
    by_guild: dict[int, list[int]] = {}
    for (_, guild_id), ids in held.items():
        # An item of another guild than the role's is never shown (roles only take their guild's items).
        by_guild[guild_id] = sorted(i for i in ids if i in items and items[i]["guild_id"] == guild_id)
    return items, by_guild


def _scope_items(items: dict[int, CosmeticRow], by_guild: dict[int, list[int]], scope_key: int
                 ) -> dict[int, CosmeticRow]:
    if scope_key == FRIENDS:
        return {i: items[i] for ids in by_guild.values() for i in ids}
    return {i: items[i] for i in by_guild.get(scope_key, [])}


async def access_styles(rt: Runtime, principal: Principal) -> dict[str, Any]:
    async with rt.read() as uow:
        guild_ids = [m.member["guild_id"] for m in
                     await member_queries.select_memberships_with_user(uow.conn, principal.user_id)]
        rows = await queries.select_styles(uow.conn, principal.user_id)
        items, by_guild = await _available(uow.conn, principal.user_id)
    mine = set(guild_ids)
    styles = [style_view(r, _scope_items(items, by_guild, r["scope_key"]))
              for r in rows if r["scope_key"] == FRIENDS or r["scope_key"] in mine]
    friends = sorted(_scope_items(items, by_guild, FRIENDS).values(), key=lambda c: c["id"])
    return {"styles": styles, "available": {
        "friends": [cosmetic_view(c) for c in friends],
        "guilds": {str(g): [cosmetic_view(items[i]) for i in by_guild.get(g, [])] for g in sorted(mine)},
    }}


async def _scope(uow: UnitOfWork, principal: Principal, scope: str, raw_guild_id: str | None) -> int:
    """The scope key: 0 for friends, the guild id for a guild the caller is a member of (404 otherwise)."""
    if scope == "friends":
        if raw_guild_id is not None:
            raise validation_error("guild_id", "only for scope guild")
        return FRIENDS
    if raw_guild_id is None:
        raise validation_error("guild_id", "is required for scope guild")
    gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
    if gc.member is None:  # an instance administrator sees the guild but has no style in it
        raise AppError("guild.not_found")
    return gc.guild_id


def _check_item(field: str, raw: str | None, kind: str, available: dict[int, CosmeticRow]) -> int | None:
    if raw is None:
        return None
    item_id = parse_id(raw)
    row = available.get(item_id) if item_id is not None else None
    if row is None or row["kind"] != kind:
        raise validation_error(field, f"must be a {kind} available to you in this scope")
    return item_id


async def _announce(uow: UnitOfWork, user_id: int, scope_key: int, view: dict[str, Any] | None) -> None:
    if scope_key == FRIENDS:
        receivers = (await friends_of(uow.conn, [user_id])).get(user_id, [])
        user = await account_queries.select_user(uow.conn, user_id)
        if receivers and user is not None:
            uow.emit(event(EventType.PRESENCE_UPDATE, {**presence_view(user, uow.now), "style": view}, receivers))
        return
    found = await member_queries.select_members_with_users(uow.conn, scope_key, user_ids=[user_id], limit=1)
    if not found:
        return
    held = await member_queries.select_role_ids_by_member(uow.conn, scope_key, [user_id])
    member = member_view(found[0].member, found[0].user, held.get(user_id, []), uow.now, style=view)
    uow.emit(notify_member(EventType.MEMBER_UPDATE, member, await guild_members(uow.conn, scope_key)))


async def do_set_style(rt: Runtime, principal: Principal, scope: str, raw_guild_id: str | None,
                       frame_id: str | None, icon_id: str | None, color: int | None) -> dict[str, Any]:
    """Replace the style of one scope; the items must be available there (422 otherwise)."""
    async with rt.uow() as uow:
        scope_key = await _scope(uow, principal, scope, raw_guild_id)
        items, by_guild = await _available(uow.conn, principal.user_id)
        available = _scope_items(items, by_guild, scope_key)
        row: StyleRow = {"user_id": principal.user_id, "scope_key": scope_key,
                         "guild_id": None if scope_key == FRIENDS else scope_key,
                         "frame_id": _check_item("frame_id", frame_id, "frame", available),
                         "icon_id": _check_item("icon_id", icon_id, "icon", available),
                         "color": color, "updated_at": uow.now}
        await queries.upsert_style(uow.conn, row)
        view = style_view(row, available)
        await _announce(uow, principal.user_id, scope_key, view)
    return {"style": view}


async def do_delete_style(rt: Runtime, principal: Principal, scope: str, raw_guild_id: str | None) -> None:
    """Clear one scope; idempotent (nothing is announced when there was nothing to clear)."""
    async with rt.uow() as uow:
        scope_key = await _scope(uow, principal, scope, raw_guild_id)
        if await queries.delete_style(uow.conn, principal.user_id, scope_key):
            await _announce(uow, principal.user_id, scope_key, None)

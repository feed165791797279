"""Serialise personal styles into the Style object (OpenAPI: getMyStyles), with the items no longer
available shown as null (the stored choice is kept, docs/customisation.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core.clock import iso
from meadhall.guilds.cosmetics.queries import CosmeticRow, select_cosmetics_by_ids
from meadhall.guilds.styles.queries import (
    FRIENDS,
    StyleRow,
    select_friends_styles,
    select_guild_styles,
    select_guild_styles_of_user,
    select_role_cosmetic_ids,
)


def _shown(item_id: int | None, kind: str, available: Mapping[int, CosmeticRow]) -> str | None:
    row = available.get(item_id) if item_id is not None else None
    return str(item_id) if row is not None and row["kind"] == kind else None


def style_view(row: StyleRow, available: Mapping[int, CosmeticRow]) -> dict[str, Any]:
    """`available`: the cosmetics the user may show in this style's scope, by id."""
    return {
        "scope": "friends" if row["scope_key"] == FRIENDS else "guild",
        "guild_id": None if row["scope_key"] == FRIENDS else str(row["scope_key"]),
        "frame_id": _shown(row["frame_id"], "frame", available),
        "icon_id": _shown(row["icon_id"], "icon", available),
        "color": row["color"],
        "updated_at": iso(row["updated_at"]),
    }


async def guild_style_views(conn: AsyncConnection, guild_id: int, user_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """user id -> the member's guild-scope Style (Member `style`), for members who set one: one query when
    none did, three otherwise."""
    rows = await select_guild_styles(conn, guild_id, user_ids)
    if not rows:
        return {}
    held = await select_role_cosmetic_ids(conn, rows, guild_id)
    items = await select_cosmetics_by_ids(conn, set().union(*held.values()) if held else set())
    out = {}
    for user_id, row in rows.items():
        mine = held.get((user_id, guild_id), set())
        out[user_id] = style_view(row, {i: items[i] for i in mine if i in items})
    return out


async def user_guild_style_views(conn: AsyncConnection, user_id: int) -> dict[int, dict[str, Any]]:
    """guild id -> one user's guild-scope Style in each guild where they set one (a profile change
    announces the member in every guild): one query when none, three otherwise."""
    rows = await select_guild_styles_of_user(conn, user_id)
    if not rows:
        return {}
    held = await select_role_cosmetic_ids(conn, [user_id])
    items = await select_cosmetics_by_ids(conn, set().union(*held.values()) if held else set())
    return {guild_id: style_view(row, {i: items[i] for i in held.get((user_id, guild_id), set()) if i in items})
            for guild_id, row in rows.items()}


async def friends_style_views(conn: AsyncConnection, user_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """user id -> friends-scope Style, for those of `user_ids` who set one (PRESENCE_UPDATE `style`): one
    query when none did, three otherwise, whatever the number of users."""
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    rows = await select_friends_styles(conn, ids)
    if not rows:
        return {}
    held = await select_role_cosmetic_ids(conn, rows)
    items = await select_cosmetics_by_ids(conn, set().union(*held.values()) if held else set())
    out = {}
    for user_id, row in rows.items():
        # Items of every guild of the user, each shown only by roles of its own guild.
        mine = {i for (u, g), found in held.items() if u == user_id for i in found
                if i in items and items[i]["guild_id"] == g}
        out[user_id] = style_view(row, {i: items[i] for i in mine})
    return out

"""Build a new guild from a structure: the plain default (`general` room), a personal template, or the
bootstrap server. One code path so that all three produce the same rows, events and audit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from meadhall.core import permissions as perms
from meadhall.core.text import norm
from meadhall.db.uow import UnitOfWork
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.hooks import GuildNotice, announce_in_room
from meadhall.guilds.members import queries as member_queries
from meadhall.guilds.roles import queries as role_queries
from meadhall.guilds.rooms import queries as room_queries
from meadhall.guilds.rows import GuildRow, RoleRow


@dataclass(frozen=True)
class RoleSpec:
    name: str
    permissions: int
    color: int = 0
    hoist: bool = False


@dataclass(frozen=True)
class ChannelSpec:
    name: str
    type: str = "text"
    topic: str | None = None
    position: int = 0
    slowmode_seconds: int = 0
    user_limit: int | None = None
    category: str | None = None


@dataclass(frozen=True)
class Structure:
    default_permissions: int = int(perms.DEFAULT)
    default_role_name: str = "@user"
    roles: list[RoleSpec] = field(default_factory=list)  # bottom-up: positions 1..n
    categories: list[tuple[str, int]] = field(default_factory=list)  # (name, position)
    channels: list[ChannelSpec] = field(default_factory=lambda: [ChannelSpec("general")])


@dataclass(frozen=True)
class BuiltGuild:
    guild: GuildRow
    role_ids: list[int]  # the non-default roles, bottom-up
    channel_ids: list[int]  # rooms (not categories) in creation order
    system_channel_id: int | None


def channel_row(uow: UnitOfWork, guild_id: int, *, name: str, type_: str, topic: str | None = None,
                position: int = 0, parent_id: int | None = None, slowmode_seconds: int = 0,
                user_limit: int | None = None) -> dict[str, Any]:
    return {
        "id": uow.next_id(),
        "guild_id": guild_id,
        "type": type_,
        "name": name,
        "topic": None if type_ == "category" else topic,
        "position": position,
        "parent_id": None if type_ == "category" else parent_id,
        "slowmode_seconds": 0 if type_ == "category" else slowmode_seconds,
        "user_limit": (user_limit or 0) if type_ == "voice" else None,
        "background_file_id": None,
        "icon_file_id": None,
        "dm_owner_id": None,
        "last_message_id": None,
        "created_at": uow.now,
    }


async def build_guild(uow: UnitOfWork, *, owner_id: int, owner_name: str, name: str, description: str | None,
                      structure: Structure, is_main: bool = False) -> BuiltGuild:
    guild_id = uow.next_id()
    conn = uow.conn
    await guild_queries.insert_guild(conn, {
        "id": guild_id, "name": name, "name_norm": norm(name), "description": description,
        "icon_file_id": None, "banner_file_id": None, "splash_file_id": None, "owner_id": owner_id,
        "member_count": 1, "system_channel_id": None, "public": False, "public_invite_code": None,
        "is_main": is_main, "created_at": uow.now,
    })
    role_rows = [_role_row(uow, guild_id, guild_id, structure.default_role_name, structure.default_permissions, 0)]
    for position, spec in enumerate(structure.roles, start=1):
        role_rows.append(_role_row(uow, guild_id, uow.next_id(), spec.name, spec.permissions, position,
                                   spec.color, spec.hoist))
    await role_queries.insert_roles(conn, role_rows)
    await member_queries.insert_member(conn, {"guild_id": guild_id, "user_id": owner_id, "nick": None, "nick_norm": None,
                                       "joined_at": uow.now, "timeout_until": None})
    category_ids: dict[str, int] = {}
    for cat_name, position in structure.categories:
        row = channel_row(uow, guild_id, name=cat_name, type_="category", position=position)
        await room_queries.insert_channel(conn, row)
        category_ids.setdefault(cat_name, row["id"])
    rooms = []
    for room_spec in structure.channels:
        row = channel_row(uow, guild_id, name=room_spec.name, type_=room_spec.type, topic=room_spec.topic,
                          position=room_spec.position, parent_id=category_ids.get(room_spec.category or ""),
                          slowmode_seconds=room_spec.slowmode_seconds, user_limit=room_spec.user_limit)
        await room_queries.insert_channel(conn, row)
        rooms.append(row)
    system_channel = next((r["id"] for r in rooms if r["type"] == "text"), None)
    if system_channel is not None:
        await guild_queries.update_guild_row(conn, guild_id, {"system_channel_id": system_channel})
    for room in rooms:
        if room["type"] == "text":
            # The owner is the only member, and owners view every room.
            await announce_in_room(uow, GuildNotice(guild_id, room["id"], "channel_create", owner_id, owner_name,
                                                    viewers=[owner_id]))
    guild = await guild_queries.select_guild(conn, guild_id)
    assert guild is not None
    return BuiltGuild(guild, [r["id"] for r in role_rows[1:]], [r["id"] for r in rooms], system_channel)


def _role_row(uow: UnitOfWork, guild_id: int, role_id: int, name: str, permissions: int, position: int,
              color: int = 0, hoist: bool = False) -> RoleRow:
    return {
        "id": role_id, "guild_id": guild_id, "name": name, "color": color, "position": position,
        "permissions": permissions, "hoist": hoist, "frame_id": None, "icon_id": None,
        "is_default": role_id == guild_id, "created_at": uow.now,
    }

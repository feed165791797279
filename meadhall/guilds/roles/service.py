"""Roles of a guild: list, read, create, update, reorder, delete, assign and remove (OpenAPI: createRole, updateRole;
docs/reference/permissions.md)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.audit.diff import changes
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError, permission_denied, validation_error
from meadhall.core.ids import parse_id
from meadhall.db.uow import UnitOfWork
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.access import GuildContext, access_guild, require
from meadhall.guilds.cosmetics.service import check_role_cosmetics
from meadhall.guilds.hooks import access_changed
from meadhall.guilds.members import queries as member_queries
from meadhall.guilds.members.service import emit_member_updates, load_target
from meadhall.guilds.roles import queries as role_queries
from meadhall.guilds.roles.events import notify_role, notify_role_delete
from meadhall.guilds.roles.views import role_view
from meadhall.guilds.rooms import queries as room_queries
from meadhall.guilds.rooms.events import notify_channel
from meadhall.guilds.rooms.views import channel_view
from meadhall.guilds.rows import RoleRow
from meadhall.guilds.styles.queries import select_styled_members
from meadhall.realtime.audience import GuildViewers, guild_members
from meadhall.realtime.events import EventType
from meadhall.runtime import Runtime

P = perms.P
MAX_ROLES = 250


# ---- room visibility after role changes --------------------------------------------------------


def _only(viewers: GuildViewers, users: frozenset[int] | None) -> GuildViewers:
    if users is None:
        return viewers
    contexts = [c for c in viewers.contexts if c.user_id in users]
    return GuildViewers(viewers.guild_id, viewers.owner_id, contexts, viewers.roles, viewers.overrides)


@dataclass
class ViewWatch:
    """Which rooms some members may view before a change of roles or overrides; `emit` then sends
    CHANNEL_CREATE to those who gained view, CHANNEL_DELETE to those who lost it (docs/reference/events.md) and
    CHANNEL_UPDATE to the viewers of rooms whose overrides changed."""

    guild_id: int
    users: frozenset[int] | None  # None: every member
    before: dict[int, set[int]]

    @classmethod
    async def take(cls, conn: AsyncConnection, guild_id: int, now: datetime,
                   users: Iterable[int] | None = None) -> ViewWatch:
        watched = None if users is None else frozenset(users)
        viewers = _only(await GuildViewers.load(conn, guild_id, now), watched)
        rooms = await room_queries.select_channels(conn, guild_id)
        return cls(guild_id, watched, {r["id"]: set(viewers.viewers(r["id"])) for r in rooms})

    async def emit(self, uow: UnitOfWork, changed_rooms: Iterable[int] = ()) -> None:
        changed = set(changed_rooms)
        everyone = await GuildViewers.load(uow.conn, self.guild_id, uow.now)
        watched = _only(everyone, self.users)
        rooms = await room_queries.select_channels(uow.conn, self.guild_id)
        overrides = await room_queries.select_guild_overrides(uow.conn, self.guild_id)
        for room in rooms:
            old, new = self.before.get(room["id"], set()), set(watched.viewers(room["id"]))
            if old == new and room["id"] not in changed:
                continue
            view = channel_view(room, overrides.get(room["id"], []))
            uow.emit(notify_channel(EventType.CHANNEL_CREATE, view, sorted(new - old)))
            uow.emit(notify_channel(EventType.CHANNEL_DELETE, view, sorted(old - new)))
            if room["id"] in changed:
                stayed = set(everyone.viewers(room["id"])) - (new - old)
                uow.emit(notify_channel(EventType.CHANNEL_UPDATE, view, sorted(stayed)))


# ---- helpers -----------------------------------------------------------------------------------


def _role(gc: GuildContext, raw_id: str) -> RoleRow:
    role_id = parse_id(raw_id)
    role = next((r for r in gc.role_rows if r["id"] == role_id), None)
    if role is None:
        raise AppError("role.not_found")
    return role


def _check_manageable(gc: GuildContext, role: RoleRow) -> None:
    if not perms.can_manage_role(gc.rank, int(role["position"])):
        raise permission_denied(None, "You can only manage roles below your highest role")


def _check_grant(gc: GuildContext, requested: int) -> None:
    if not perms.can_grant(gc.permissions, requested):
        lacking = perms.missing(gc.permissions, requested)
        name = lacking.name if lacking is not None else "?"
        raise permission_denied(None, f"A role may only carry permissions you hold; you lack {name}")


async def _check_cosmetics(conn: AsyncConnection, gc: GuildContext, fields: dict[str, Any]) -> dict[str, Any]:
    """The fields with `frame_id` / `icon_id` as integers, each a gallery item of its kind (404
    `cosmetic.not_found` otherwise, docs/customisation.md)."""
    await check_role_cosmetics(conn, gc.guild_id, fields)
    out = dict(fields)
    for key in ("frame_id", "icon_id"):
        if key in out and out[key] is not None:
            out[key] = parse_id(out[key])
    return out


def _audit_changes(before: RoleRow, values: dict[str, Any]) -> dict[str, list[Any]]:
    diff = changes(before, values)
    if "permissions" in diff:
        diff["permissions"] = [perms.to_string(int(before["permissions"])), perms.to_string(values["permissions"])]
    return diff


# ---- reads -------------------------------------------------------------------------------------


async def access_roles(rt: Runtime, principal: Principal, raw_guild_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
    return {"roles": [role_view(r) for r in gc.role_rows]}


async def access_role_view(rt: Runtime, principal: Principal, raw_guild_id: str, raw_role_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
    return {"role": role_view(_role(gc, raw_role_id))}


# ---- create, update, delete --------------------------------------------------------------------


async def do_create_role(rt: Runtime, principal: Principal, raw_guild_id: str, body: dict[str, Any]
                      ) -> dict[str, Any]:
    """The new role takes position 1; the roles at 1 and above move up by one (ROLE_UPDATE each)."""
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.MANAGE_ROLES)
        body = await _check_cosmetics(uow.conn, gc, body)
        _check_grant(gc, body["permissions"])
        # Concurrent creations would both take position 1 and both pass the count (PostgreSQL).
        await guild_queries.lock_guild(uow.conn, gc.guild_id)
        if await role_queries.count_roles(uow.conn, gc.guild_id) >= MAX_ROLES:
            raise AppError("role.limit_reached")
        current = await role_queries.select_roles(uow.conn, gc.guild_id)
        shifted = [r for r in current if not r["is_default"] and r["position"] >= 1]
        await role_queries.update_role_positions_up(uow.conn, gc.guild_id, 1)
        row: RoleRow = {"id": uow.next_id(), "guild_id": gc.guild_id, "name": body["name"], "color": body["color"],
               "position": 1, "permissions": body["permissions"], "hoist": body["hoist"],
               "frame_id": body["frame_id"], "icon_id": body["icon_id"], "is_default": False, "created_at": uow.now}
        await role_queries.insert_roles(uow.conn, [row])
        audience = await guild_members(uow.conn, gc.guild_id)
        view = role_view(row)
        uow.emit(notify_role(EventType.ROLE_CREATE, view, audience))
        for old in shifted:
            uow.emit(notify_role(EventType.ROLE_UPDATE, role_view({**old, "position": old["position"] + 1}),
                                 audience))
        await record(uow, "role.create", actor_id=principal.user_id, target_type="role", target_id=row["id"],
                     guild_id=gc.guild_id,
                     data={"name": row["name"], "permissions": perms.to_string(row["permissions"]),
                           "color": row["color"], "hoist": row["hoist"]})
    return {"role": view}


async def do_update_role(rt: Runtime, principal: Principal, raw_guild_id: str, raw_role_id: str,
                      fields: dict[str, Any]) -> dict[str, Any]:
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.MANAGE_ROLES)
        role = _role(gc, raw_role_id)
        if role["is_default"]:
            # The default role sits below everyone; only its name is fixed.
            if "name" in fields and fields["name"] != role["name"]:
                raise AppError("role.default_role", "The default role cannot be renamed")
        else:
            _check_manageable(gc, role)
        fields = await _check_cosmetics(uow.conn, gc, fields)
        if "permissions" in fields:
            _check_grant(gc, fields["permissions"])
        diff = _audit_changes(role, fields)
        if diff:
            watch = None
            if "permissions" in diff:
                holders = None if role["is_default"] else await role_queries.select_role_holders(uow.conn, gc.guild_id,
                                                                                         role["id"])
                watch = await ViewWatch.take(uow.conn, gc.guild_id, uow.now, holders)
            await role_queries.update_role_row(uow.conn, gc.guild_id, role["id"], fields)
            await record(uow, "role.update", actor_id=principal.user_id, target_type="role", target_id=role["id"],
                         guild_id=gc.guild_id, data={"changes": diff})
            updated = await role_queries.select_role(uow.conn, gc.guild_id, role["id"])
            assert updated is not None
            role = updated
            uow.emit(notify_role(EventType.ROLE_UPDATE, role_view(role), await guild_members(uow.conn, gc.guild_id)))
            if watch is not None:
                await watch.emit(uow)
            if "frame_id" in diff or "icon_id" in diff:
                # What the holders may show changed: their guild styles may show other items now.
                holders = None if role["is_default"] else await role_queries.select_role_holders(
                    uow.conn, gc.guild_id, role["id"])
                await emit_member_updates(uow, gc.guild_id, await select_styled_members(uow.conn, gc.guild_id, holders))
    if "permissions" in fields:
        await access_changed(rt, gc.guild_id)  # who lost CONNECT_VOICE or VIEW_CHANNEL leaves voice
    return {"role": role_view(role)}


async def do_delete_role(rt: Runtime, principal: Principal, raw_guild_id: str, raw_role_id: str) -> None:
    """Its overrides go with it; holders get MEMBER_UPDATE, the rooms that had an override CHANNEL_UPDATE."""
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.MANAGE_ROLES)
        role = _role(gc, raw_role_id)
        if role["is_default"]:
            raise AppError("role.default_role", "The default role cannot be deleted")
        _check_manageable(gc, role)
        role_id = int(role["id"])
        holders = await role_queries.select_role_holders(uow.conn, gc.guild_id, role_id)
        watch = await ViewWatch.take(uow.conn, gc.guild_id, uow.now, holders)
        rooms = await room_queries.delete_overrides_for_target(uow.conn, gc.guild_id, role_id)
        await role_queries.delete_role_assignments(uow.conn, gc.guild_id, role_id)
        await role_queries.delete_role_row(uow.conn, gc.guild_id, role_id)
        uow.emit(notify_role_delete(gc.guild_id, role_id, await guild_members(uow.conn, gc.guild_id)))
        await emit_member_updates(uow, gc.guild_id, holders)
        await watch.emit(uow, rooms)
        await record(uow, "role.delete", actor_id=principal.user_id, target_type="role", target_id=role_id,
                     guild_id=gc.guild_id, data={"name": role["name"], "holders": len(holders)})
    await access_changed(rt, gc.guild_id)


# ---- reorder -----------------------------------------------------------------------------------


def _new_order(role_rows: list[RoleRow], requested: dict[int, int], rank: int) -> list[int]:
    """Non-default role ids bottom-up after the moves. Only the roles below the caller are rearranged
    (each moved role is inserted at its requested place among them); the roles at or above the caller's
    rank keep their order on top, so renumbering can never lift a role above the caller."""
    others = [r for r in role_rows if not r["is_default"]]
    below = [r["id"] for r in others if r["position"] < rank]
    above = [r["id"] for r in others if r["position"] >= rank]
    order = [role_id for role_id in below if role_id not in requested]
    for role_id, position in sorted(requested.items(), key=lambda item: item[1]):
        order.insert(min(max(position - 1, 0), len(order)), role_id)
    return order + above


def _requested_moves(gc: GuildContext, moves: list[dict[str, Any]]) -> dict[int, int]:
    by_id = {r["id"]: r for r in gc.role_rows}
    requested: dict[int, int] = {}
    for move in moves:
        role_id = parse_id(move["id"])
        if role_id is None or role_id not in by_id:
            raise validation_error("roles.id", f"unknown role {move['id']}")
        if role_id in requested:
            raise validation_error("roles.id", f"role {move['id']} is listed twice")
        if by_id[role_id]["is_default"]:
            raise AppError("role.default_role", "The default role cannot be moved")
        requested[role_id] = int(move["position"])
    return requested


async def do_reorder_roles(rt: Runtime, principal: Principal, raw_guild_id: str, moves: list[dict[str, Any]]
                        ) -> dict[str, Any]:
    """Positions are renumbered 1..n in the requested order; ROLE_UPDATE for each role that moved."""
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.MANAGE_ROLES)
        requested = _requested_moves(gc, moves)
        if not perms.can_reorder(gc.rank, requested, gc.roles.positions):
            raise permission_denied(None, "You can only move roles below your highest role, to places below it")
        old = {r["id"]: int(r["position"]) for r in gc.role_rows}
        moved = [(role_id, position) for position, role_id in enumerate(_new_order(gc.role_rows, requested,
                                                                                     gc.rank), start=1)
                 if old[role_id] != position]
        for role_id, position in moved:
            await role_queries.update_role_row(uow.conn, gc.guild_id, role_id, {"position": position})
        rows = await role_queries.select_roles(uow.conn, gc.guild_id)
        if moved:
            audience = await guild_members(uow.conn, gc.guild_id)
            ids = {role_id for role_id, _ in moved}
            for row in rows:
                if row["id"] in ids:
                    uow.emit(notify_role(EventType.ROLE_UPDATE, role_view(row), audience))
            await record(uow, "role.reorder", actor_id=principal.user_id, target_type="role",
                         target_id=moved[0][0], guild_id=gc.guild_id,
                         data={"roles": [{"id": str(r), "from": old[r], "to": p} for r, p in moved]})
    return {"roles": [role_view(r) for r in rows]}


# ---- assignment --------------------------------------------------------------------------------


async def do_set_member_role(rt: Runtime, principal: Principal, raw_guild_id: str, raw_user_id: str,
                          raw_role_id: str, assign: bool) -> None:
    """PUT / DELETE of a member's role: idempotent; MEMBER_UPDATE and audit only when it changed."""
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        target, _ = await load_target(uow, gc, parse_id(raw_user_id))
        role = _role(gc, raw_role_id)
        require(gc, P.MANAGE_ROLES)
        if role["is_default"]:
            raise AppError("role.default_role", "The default role is held by every member")
        _check_manageable(gc, role)
        watch = await ViewWatch.take(uow.conn, gc.guild_id, uow.now, [target.user_id])
        if assign:
            changed = await member_queries.insert_member_role_once(uow.conn, gc.guild_id, target.user_id, role["id"])
        else:
            changed = await member_queries.delete_member_role_row(uow.conn, gc.guild_id, target.user_id, role["id"])
        if changed:
            await record(uow, "member.role_add" if assign else "member.role_remove", actor_id=principal.user_id,
                         target_type="user", target_id=target.user_id, guild_id=gc.guild_id,
                         data={"role_id": str(role["id"])})
            await emit_member_updates(uow, gc.guild_id, [target.user_id])
            await watch.emit(uow)
    await access_changed(rt, gc.guild_id)  # a role's overrides may deny CONNECT_VOICE

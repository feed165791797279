"""The cosmetics gallery of a guild: frames and icons that roles (and personal styles) show (OpenAPI:
listCosmetics, createCosmetic, updateCosmetic, deleteCosmetic; docs/customisation.md).

Managed with MANAGE_ROLES; PNG, JPEG, WebP or GIF images checked by decoding as declared, at most the
`gallery_max_bytes` media limit, at most `COSMETICS_PER_GUILD` items. A frame is stored as a `banner`
file, an icon as an `avatar` file (both fetched by any signed-in user). Deleting an item clears it from
the roles that show it (ROLE_UPDATE for each).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError
from meadhall.core.ids import parse_id
from meadhall.core.limits import COSMETICS_PER_GUILD
from meadhall.db.uow import UnitOfWork
from meadhall.files import queries as file_queries
from meadhall.files.checks import check_image, image_type_allowed
from meadhall.files.cleanup import drop_files
from meadhall.files.intake import kept_until_commit
from meadhall.files.upload import OpenUpload
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.access import GuildContext, access_guild, require
from meadhall.guilds.cosmetics import queries
from meadhall.guilds.cosmetics.events import notify_cosmetics_update
from meadhall.guilds.cosmetics.queries import CosmeticRow
from meadhall.guilds.cosmetics.schemas import COSMETIC_KINDS
from meadhall.guilds.cosmetics.views import cosmetic_view
from meadhall.guilds.members.service import emit_member_updates
from meadhall.guilds.roles import queries as role_queries
from meadhall.guilds.roles.events import notify_role
from meadhall.guilds.roles.views import role_view
from meadhall.guilds.styles.queries import select_styled_members
from meadhall.guilds.uploads import choice_field, receive_item, text_field
from meadhall.realtime.audience import guild_members
from meadhall.realtime.events import EventType
from meadhall.runtime import Runtime

P = perms.P
FILE_OWNER = "cosmetic"
PURPOSES = {"frame": "banner", "icon": "avatar"}
ROLE_COLUMNS = {"frame_id": "frame", "icon_id": "icon"}


async def _cosmetic(conn: AsyncConnection, guild_id: int, raw_id: str | int) -> CosmeticRow:
    cosmetic_id = parse_id(raw_id)
    row = None if cosmetic_id is None else await queries.select_cosmetic(conn, guild_id, cosmetic_id)
    if row is None:
        raise AppError("cosmetic.not_found")
    return row


async def check_role_cosmetics(conn: AsyncConnection, guild_id: int, fields: dict[str, Any]) -> None:
    """A role's `frame_id` / `icon_id` must name a gallery item of this guild of that kind: otherwise 404
    `cosmetic.not_found` (an item of the other kind is not a frame, or not an icon). Null clears."""
    for column, kind in ROLE_COLUMNS.items():
        raw = fields.get(column)
        if raw is None:
            continue
        row = await _cosmetic(conn, guild_id, raw)
        if row["kind"] != kind:
            raise AppError("cosmetic.not_found", f"Unknown cosmetic: {column} must name a {kind} of this server")


async def _announce(uow: UnitOfWork, guild_id: int) -> None:
    rows = await queries.select_cosmetics(uow.conn, guild_id)
    uow.emit(notify_cosmetics_update(guild_id, rows, await guild_members(uow.conn, guild_id)))


async def access_cosmetics(rt: Runtime, principal: Principal, raw_guild_id: str, kind: str | None
                           ) -> dict[str, Any]:
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        rows = await queries.select_cosmetics(uow.conn, gc.guild_id, kind)
    return {"cosmetics": [cosmetic_view(r) for r in rows]}


async def do_create_cosmetic(rt: Runtime, principal: Principal, raw_guild_id: str, upload: OpenUpload
                             ) -> dict[str, Any]:
    """MANAGE_ROLES; the image (413 / 415), `kind` and `name` (422), the count (409)."""
    incoming = await receive_item(rt, principal, raw_guild_id, P.MANAGE_ROLES, upload, limit="gallery_max_bytes",
                                  purpose="avatar", check=check_image, accept=image_type_allowed)
    new = incoming.new
    async with kept_until_commit(rt, new), rt.uow() as uow:
        kind = choice_field(incoming.fields, "kind", COSMETIC_KINDS)
        name = text_field(incoming.fields, "name", min_length=1, max_length=32)
        assert kind is not None and name is not None
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.MANAGE_ROLES)
        # Concurrent uploads would both pass the count (PostgreSQL).
        await guild_queries.lock_guild(uow.conn, gc.guild_id)
        if await queries.count_cosmetics(uow.conn, gc.guild_id) >= COSMETICS_PER_GUILD:
            raise AppError("cosmetic.limit_reached")
        cosmetic_id = uow.next_id()
        # The kind, known only once the form is read, decides who may fetch the file (docs/files.md).
        stored = dataclasses.replace(new, purpose=PURPOSES[kind])
        await file_queries.insert_file(uow.conn, stored.row(uow.now, owner=FILE_OWNER, owner_id=cosmetic_id,
                                                            guild_id=gc.guild_id))
        row: CosmeticRow = {"id": cosmetic_id, "guild_id": gc.guild_id, "kind": kind, "name": name,
                            "file_id": new.id, "created_at": uow.now}
        await queries.insert_cosmetic(uow.conn, row)
        await record(uow, "cosmetic.create", actor_id=principal.user_id, target_type="cosmetic",
                     target_id=cosmetic_id, guild_id=gc.guild_id, data={"name": name, "kind": kind})
        await _announce(uow, gc.guild_id)
    return {"cosmetic": cosmetic_view(row)}


async def do_update_cosmetic(rt: Runtime, principal: Principal, raw_guild_id: str, raw_cosmetic_id: str,
                             name: str) -> dict[str, Any]:
    async with rt.uow() as uow:
        gc: GuildContext = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        row = await _cosmetic(uow.conn, gc.guild_id, raw_cosmetic_id)
        require(gc, P.MANAGE_ROLES)
        if name != row["name"]:
            await queries.update_cosmetic_name(uow.conn, gc.guild_id, row["id"], name)
            await record(uow, "cosmetic.update", actor_id=principal.user_id, target_type="cosmetic",
                         target_id=row["id"], guild_id=gc.guild_id, data={"changes": {"name": [row["name"], name]}})
            row = {**row, "name": name}
            await _announce(uow, gc.guild_id)
    return {"cosmetic": cosmetic_view(row)}


async def do_delete_cosmetic(rt: Runtime, principal: Principal, raw_guild_id: str, raw_cosmetic_id: str) -> None:
    """MANAGE_ROLES; roles showing it lose it (ROLE_UPDATE each); the file goes after the commit."""
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        row = await _cosmetic(uow.conn, gc.guild_id, raw_cosmetic_id)
        require(gc, P.MANAGE_ROLES)
        cleared = set(await queries.clear_role_cosmetic(uow.conn, gc.guild_id, row["id"]))
        await queries.delete_cosmetic_row(uow.conn, gc.guild_id, row["id"])
        await drop_files(uow, rt.files, [row["file_id"]])
        await record(uow, "cosmetic.delete", actor_id=principal.user_id, target_type="cosmetic", target_id=row["id"],
                     guild_id=gc.guild_id, data={"name": row["name"], "kind": row["kind"],
                                                 "roles": sorted(str(r) for r in cleared)})
        audience = await guild_members(uow.conn, gc.guild_id)
        await _announce(uow, gc.guild_id)
        for role in await role_queries.select_roles(uow.conn, gc.guild_id):
            if role["id"] in cleared:
                uow.emit(notify_role(EventType.ROLE_UPDATE, role_view(role), audience))
        # Members whose guild style chose it now show null in its place.
        await emit_member_updates(uow, gc.guild_id, await select_styled_members(uow.conn, gc.guild_id,
                                                                                item_id=row["id"]))

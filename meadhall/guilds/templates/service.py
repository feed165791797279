"""Personal templates (OpenAPI: createTemplate, listMyTemplates, deleteTemplate, createGuild): save a guild's structure, list and delete one's own,
and load one as the `Structure` a new guild is built from."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.clock import iso
from meadhall.core.errors import AppError, validation_error
from meadhall.core.ids import parse_id
from meadhall.db.uow import UnitOfWork
from meadhall.guilds.access import access_guild, load_guild_context, require
from meadhall.guilds.members import queries as member_queries
from meadhall.guilds.roles import queries as role_queries
from meadhall.guilds.rooms import queries as room_queries
from meadhall.guilds.rows import ChannelRow, RoleRow, TemplateRow
from meadhall.guilds.structure import ChannelSpec, RoleSpec, Structure
from meadhall.guilds.templates import queries as template_queries
from meadhall.runtime import Runtime

MAX_TEMPLATES = 20
MAX_STRUCTURE_BYTES = 16 * 1024
TEMPLATE_PREFIX = "personal:"


# ---- structure <-> JSON ------------------------------------------------------------------------


def capture_structure(role_rows: Sequence[RoleRow], channel_rows: Sequence[ChannelRow]) -> dict[str, Any]:
    """The template `structure` of a guild: roles lowest to highest (the default role first), categories,
    and rooms naming their category. Overrides, emojis, sounds, cosmetics, webhooks are left out."""
    ordered_roles = sorted(role_rows, key=lambda r: (not r["is_default"], int(r["position"]), int(r["id"])))
    ordered_channels = sorted(channel_rows, key=lambda c: (int(c["position"]), int(c["id"])))
    category_names: dict[int | None, str | None] = {c["id"]: c["name"] for c in ordered_channels if c["type"] == "category"}
    return {
        "roles": [
            {"name": r["name"], "permissions": perms.to_string(int(r["permissions"])), "color": int(r["color"]),
             "hoist": bool(r["hoist"]), "is_default": bool(r["is_default"])}
            for r in ordered_roles
        ],
        "categories": [
            {"name": c["name"], "position": int(c["position"])} for c in ordered_channels if c["type"] == "category"
        ],
        "channels": [
            {"name": c["name"], "type": c["type"], "topic": c["topic"], "position": int(c["position"]),
             "slowmode_seconds": int(c["slowmode_seconds"]),
             "user_limit": None if c["user_limit"] is None else int(c["user_limit"]),
             "category": category_names.get(c["parent_id"])}
            for c in ordered_channels if c["type"] != "category"
        ],
    }


def structure_size(structure: dict[str, Any]) -> int:
    """Bytes of the compact UTF-8 JSON form, the form the 16 KiB limit is measured on."""
    return len(json.dumps(structure, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def structure_of(data: dict[str, Any]) -> Structure:
    """A stored `structure` as the Structure `build_guild` takes (OpenAPI: createGuild, `template_id`): the is_default entry's
    permissions go to the new default role; the other roles bottom-up at positions 1..n."""
    role_entries = data.get("roles") or []
    default = next((r for r in role_entries if r.get("is_default")), None)
    default_permissions = int(perms.parse(default["permissions"])) if default else int(perms.DEFAULT)
    roles = [
        RoleSpec(name=r["name"], permissions=int(perms.parse(r.get("permissions") or "")),
                 color=int(r.get("color") or 0), hoist=bool(r.get("hoist")))
        for r in role_entries if not r.get("is_default")
    ]
    categories = [(c["name"], int(c.get("position") or 0)) for c in data.get("categories") or []]
    channels = [
        ChannelSpec(name=c["name"], type=c.get("type") or "text", topic=c.get("topic"),
                    position=int(c.get("position") or 0), slowmode_seconds=int(c.get("slowmode_seconds") or 0),
                    user_limit=c.get("user_limit"), category=c.get("category"))
        for c in data.get("channels") or []
    ]
    return Structure(default_permissions=default_permissions, roles=roles, categories=categories, channels=channels)


def parse_template_ref(template_ref: str) -> int:
    """`personal:<id>` -> id; 422 on any other form (a malformed id in a body, docs/reference/errors.md)."""
    prefix, _, raw = template_ref.partition(":")
    template_id = parse_id(raw) if prefix + ":" == TEMPLATE_PREFIX else None
    if template_id is None:
        raise validation_error("template_id", "must be personal:<template id>")
    return template_id


async def load_personal_template(uow: UnitOfWork, owner_id: int, template_ref: str) -> Structure:
    """The Structure of the caller's own template; 404 `template.not_found` for unknown or foreign ones."""
    row = await template_queries.select_template(uow.conn, owner_id, parse_template_ref(template_ref))
    if row is None:
        raise AppError("template.not_found")
    return structure_of(row["structure"])


# ---- views -------------------------------------------------------------------------------------


def template_view(row: TemplateRow) -> dict[str, Any]:
    source = row["source_guild_id"]
    return {
        "id": str(row["id"]),
        "name": row["name"],
        "description": row["description"],
        "owner_id": str(row["owner_id"]),
        "source_guild_id": None if source is None else str(source),
        "structure": row["structure"],
        "created_at": iso(row["created_at"]),
    }


# ---- services ----------------------------------------------------------------------------------


async def _guild_structure(conn: AsyncConnection, guild_id: int) -> dict[str, Any]:
    return capture_structure(await role_queries.select_roles(conn, guild_id), await room_queries.select_channels(conn, guild_id))


async def do_create_template(rt: Runtime, principal: Principal, guild_id: int, name: str, description: str | None
                          ) -> dict[str, Any]:
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, guild_id, uow.now)
        require(gc, perms.P.MANAGE_GUILD)
        await template_queries.lock_owner(uow.conn, principal.user_id)
        if await template_queries.count_templates(uow.conn, principal.user_id) >= MAX_TEMPLATES:
            raise AppError("template.limit_reached")
        structure = await _guild_structure(uow.conn, gc.guild_id)
        if structure_size(structure) > MAX_STRUCTURE_BYTES:
            raise AppError("template.too_large")
        row: TemplateRow = {"id": uow.next_id(), "owner_id": principal.user_id, "name": name, "description": description,
               "source_guild_id": gc.guild_id, "structure": structure, "created_at": uow.now}
        await template_queries.insert_template(uow.conn, row)
        await record(uow, "template.create", actor_id=principal.user_id, target_type="template",
                     target_id=row["id"], guild_id=gc.guild_id, data={"name": name})
    return {"template": template_view(row)}


async def access_own_templates(rt: Runtime, principal: Principal) -> dict[str, Any]:
    async with rt.read() as uow:
        rows = await template_queries.select_templates(uow.conn, principal.user_id)
    return {"templates": [template_view(r) for r in rows]}


async def do_delete_template(rt: Runtime, principal: Principal, raw_id: str) -> None:
    """Own templates only (another's answers 404). MANAGE_GUILD is checked in the source guild while it
    exists and the caller is its member; otherwise the owner may always delete."""
    async with rt.uow() as uow:
        template_id = parse_id(raw_id)
        row = None if template_id is None else await template_queries.select_template(uow.conn, principal.user_id, template_id)
        if row is None:
            raise AppError("template.not_found")
        source_id = row["source_guild_id"]
        if source_id is not None and await member_queries.select_member(uow.conn, source_id, principal.user_id) is not None:
            gc = await load_guild_context(uow.conn, principal, source_id, uow.now)
            assert gc is not None
            require(gc, perms.P.MANAGE_GUILD)
        await template_queries.delete_template_row(uow.conn, principal.user_id, row["id"])

"""Guild create, read, update, delete, leave, own list and public list (OpenAPI: createGuild, getGuild, updateGuild, deleteGuild, leaveGuild, listMyGuilds,
listPublicGuilds)."""

from __future__ import annotations

from typing import Any

from meadhall.accounts import queries as account_queries
from meadhall.accounts.signin import require_step_up
from meadhall.audit.diff import changes
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError, permission_denied, validation_error
from meadhall.core.ids import parse_id, sid
from meadhall.core.text import norm
from meadhall.db.uow import UnitOfWork
from meadhall.files.cleanup import drop_guild_files
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.access import access_guild, require
from meadhall.guilds.events import notify_guild_create, notify_guild_delete, notify_guild_update
from meadhall.guilds.hooks import access_changed
from meadhall.guilds.invites.codes import insert_invite
from meadhall.guilds.invites.queries import delete_public_invite
from meadhall.guilds.members import queries as member_queries
from meadhall.guilds.members.service import check_membership_limit, do_remove_member
from meadhall.guilds.roles.service import ViewWatch
from meadhall.guilds.rooms import queries as room_queries
from meadhall.guilds.rows import GuildRow
from meadhall.guilds.snapshot import snapshot_of
from meadhall.guilds.structure import Structure, build_guild
from meadhall.guilds.views import guild_view
from meadhall.realtime.audience import guild_members
from meadhall.runtime import Runtime


async def do_create_guild(rt: Runtime, principal: Principal, name: str, description: str | None,
                       template_id: str | None) -> dict[str, Any]:
    async with rt.uow() as uow:
        await check_membership_limit(uow, principal.user_id)
        structure, template_ref = Structure(), None
        if template_id is not None:
            from meadhall.guilds.templates.service import load_personal_template

            structure = await load_personal_template(uow, principal.user_id, template_id)
            template_ref = template_id
        owner = await account_queries.select_user(uow.conn, principal.user_id)
        assert owner is not None
        built = await build_guild(uow, owner_id=principal.user_id, owner_name=owner["display_name"], name=name,
                                  description=description, structure=structure)
        await record(uow, "guild.create", actor_id=principal.user_id, target_type="guild",
                     target_id=built.guild["id"], guild_id=built.guild["id"],
                     data={"template_id": template_ref} if template_ref else {})
        uow.emit(notify_guild_create(await snapshot_of(uow, built.guild["id"], principal.user_id),
                       [principal.user_id]))
    return {"guild": guild_view(built.guild)}


async def access_guild_view(rt: Runtime, principal: Principal, raw_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_id, uow.now)
    return {"guild": guild_view(gc.guild)}


async def access_own_guilds(rt: Runtime, principal: Principal) -> dict[str, Any]:
    async with rt.read() as uow:
        rows = await guild_queries.select_guilds_of_user(uow.conn, principal.user_id)
    return {"guilds": [guild_view(r) for r in rows]}


async def access_public_guilds(rt: Runtime, principal: Principal, q: str | None, before: int | None, limit: int
                        ) -> dict[str, Any]:
    async with rt.read() as uow:
        rows = await guild_queries.select_public_guilds(uow.conn, norm(q) if q else None, before, limit + 1)
        joined = await guild_queries.select_member_guild_ids(
            uow.conn, principal.user_id, [r["id"] for r in rows]) if rows else set()
    items = [
        {"id": str(r["id"]), "name": r["name"], "icon_file_id": sid(r["icon_file_id"]),
         "description": r["description"], "member_count": int(r["member_count"]), "is_member": r["id"] in joined,
         "public_invite_code": r["public_invite_code"]}
        for r in rows[:limit]
    ]
    return {"guilds": items, "has_more": len(rows) > limit}


async def do_update_guild(rt: Runtime, principal: Principal, raw_id: str, fields: dict[str, Any]) -> dict[str, Any]:
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_id, uow.now)
        require(gc, perms.P.MANAGE_GUILD)
        values = await _validated_changes(uow, gc, fields)
        watch = None
        if "owner_id" in values:
            if not (gc.actor.is_owner or gc.actor.is_instance_admin):
                raise permission_denied(None, "Only the owner can transfer the server")
            require_step_up(rt, principal)
            # The owner views every room: the new one may gain rooms, the old one lose them (docs/reference/events.md).
            watch = await ViewWatch.take(uow.conn, gc.guild_id, uow.now, [gc.guild["owner_id"], values["owner_id"]])
        if "name" in values:
            values["name_norm"] = norm(values["name"])
        if "public" in values and values["public"] != bool(gc.guild["public"]):
            values["public_invite_code"] = await _toggle_public(uow, gc.guild, principal.user_id, values["public"])
        diff = changes(gc.guild, values)
        diff.pop("name_norm", None)
        if values:
            await guild_queries.update_guild_row(uow.conn, gc.guild_id, values)
        guild = await guild_queries.select_guild(uow.conn, gc.guild_id)
        assert guild is not None
        if diff:
            await record(uow, "guild.update", actor_id=principal.user_id, target_type="guild",
                         target_id=gc.guild_id, guild_id=gc.guild_id, data={"changes": diff})
            if "owner_id" in diff:
                await record(uow, "guild.owner_transfer", actor_id=principal.user_id, target_type="user",
                             target_id=values["owner_id"], guild_id=gc.guild_id,
                             data={"from": str(gc.guild["owner_id"])})
            uow.emit(notify_guild_update(guild_view(guild), await guild_members(uow.conn, gc.guild_id)))
            if watch is not None:
                await watch.emit(uow)
    return {"guild": guild_view(guild)}


async def _validated_changes(uow: Any, gc: Any, fields: dict[str, Any]) -> dict[str, Any]:
    values = dict(fields)
    if "system_channel_id" in values and values["system_channel_id"] is not None:
        channel_id = parse_id(values["system_channel_id"])
        room = None if channel_id is None else await room_queries.select_guild_channel(uow.conn, gc.guild_id, channel_id)
        if room is None or room["type"] != "text":
            raise validation_error("system_channel_id", "must be a text room of this server")
        values["system_channel_id"] = channel_id
    if "owner_id" in values:
        owner_id = parse_id(values["owner_id"])
        if owner_id is None or await member_queries.select_member(uow.conn, gc.guild_id, owner_id) is None:
            raise validation_error("owner_id", "the new owner must be a member")
        values["owner_id"] = owner_id
        if owner_id == gc.guild["owner_id"]:
            del values["owner_id"]
    return values


async def _toggle_public(uow: Any, guild: Any, actor_id: int, public: bool) -> str | None:
    """Setting `public` creates the permanent public invitation; clearing it deletes it (OpenAPI: updateGuild)."""
    if not public:
        await delete_public_invite(uow.conn, guild["id"])
        return None
    rooms = await room_queries.select_channels(uow.conn, guild["id"])
    room_id = guild["system_channel_id"] or next((r["id"] for r in rooms if r["type"] == "text"), None)
    if room_id is None:
        raise validation_error("public", "a public server needs a text room")
    invite = await insert_invite(uow, guild_id=guild["id"], channel_id=room_id, inviter_id=actor_id,
                                 max_age_seconds=0, max_uses=0, is_public=True)
    return str(invite["code"])


async def do_delete_guild(rt: Runtime, principal: Principal, raw_id: str) -> None:
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_id, uow.now)
        if not gc.actor.is_owner:
            raise permission_denied(None, "Only the owner can delete the server")
        require_step_up(rt, principal)
        await remove_guild(rt, uow, gc.guild, principal.user_id, "guild.delete")
    await access_changed(rt, gc.guild_id)  # voice participants leave the media server


async def remove_guild(rt: Runtime, uow: UnitOfWork, guild: GuildRow, actor_id: int, action: str) -> None:
    """Delete an authorised guild in the caller's unit of work: audit `action`, its rows and files, GUILD_DELETE
    (`deleted`) to its members. The caller runs `access_changed` after commit (voice participants leave). The
    owner's deletion and instance administration's (OpenAPI: deleteInstanceGuild) share it."""
    audience = await guild_members(uow.conn, guild["id"])
    await record(uow, action, actor_id=actor_id, target_type="guild", target_id=guild["id"], guild_id=guild["id"],
                 data={"name": guild["name"]})
    await guild_queries.delete_guild_row(uow.conn, guild["id"])
    await drop_guild_files(uow, rt.files, guild["id"])
    uow.emit(notify_guild_delete(guild["id"], "deleted", audience))


async def do_leave_guild(rt: Runtime, principal: Principal, raw_id: str) -> None:
    async with rt.uow() as uow:
        guild_id = parse_id(raw_id)
        guild = None if guild_id is None else await guild_queries.select_guild(uow.conn, guild_id)
        if guild is None or await member_queries.select_member(uow.conn, guild["id"], principal.user_id) is None:
            raise AppError("guild.not_found")
        if guild["owner_id"] == principal.user_id:
            raise AppError("guild.owner_cannot_leave")
        await do_remove_member(uow, guild, principal.user_id, "left")
    await access_changed(rt, guild["id"])


async def snapshot(rt: Runtime, guild_id: int, user_id: int) -> dict[str, Any]:
    async with rt.read() as uow:
        return await snapshot_of(uow, guild_id, user_id)

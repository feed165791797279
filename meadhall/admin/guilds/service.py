"""Instance administration of servers (docs/admin.md, "Servers"): list every server with its owner, rename
one, move the main flag, delete one. The administrator acts on any server, member or not."""

from __future__ import annotations

from typing import Any

from meadhall.accounts import queries as account_queries
from meadhall.accounts.signin import require_step_up
from meadhall.accounts.views import user_summary
from meadhall.admin.access import require_admin
from meadhall.admin.guilds import queries
from meadhall.audit.diff import changes
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError
from meadhall.core.ids import parse_id
from meadhall.core.text import norm
from meadhall.db.dialect import transaction_lock
from meadhall.db.uow import UnitOfWork
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.events import notify_guild_update
from meadhall.guilds.hooks import access_changed
from meadhall.guilds.rows import GuildRow
from meadhall.guilds.service import remove_guild
from meadhall.guilds.views import guild_view
from meadhall.realtime.audience import guild_members
from meadhall.runtime import Runtime


async def access_instance_guilds(rt: Runtime, principal: Principal, f: queries.GuildFilter, before: int | None,
                                 limit: int) -> dict[str, Any]:
    """One page of servers, newest first, in three queries whatever the page size (page, count, owners)."""
    require_admin(principal)
    async with rt.read() as uow:
        rows = await queries.select_guild_page(uow.conn, f, before, limit)
        total = await queries.count_guilds(uow.conn, f)
        owners = await account_queries.select_users_by_ids(uow.conn, [r["owner_id"] for r in rows[:limit]])
        now = uow.now
    items = [{**guild_view(r), "owner": user_summary(owners[r["owner_id"]], now)} for r in rows[:limit]]
    return {"guilds": items, "total": total, "has_more": len(rows) > limit}


async def _load_guild(uow: UnitOfWork, raw_id: str) -> GuildRow:
    guild_id = parse_id(raw_id)
    guild = None if guild_id is None else await guild_queries.select_guild(uow.conn, guild_id)
    if guild is None:
        raise AppError("guild.not_found")
    return guild


async def do_update_instance_guild(rt: Runtime, principal: Principal, raw_id: str, fields: dict[str, Any]
                                   ) -> dict[str, Any]:
    """Rename a server or set / clear its main flag. Setting the flag clears it on the server that held it,
    in the same transaction, and that server's members hear of it too."""
    require_admin(principal)
    async with rt.uow() as uow:
        if fields.get("is_main") is True:
            await transaction_lock(uow.conn, queries.MAIN_FLAG_LOCK)
        guild = await _load_guild(uow, raw_id)
        values = dict(fields)
        diff = changes(guild, values)
        if "name" in diff:
            values["name_norm"] = norm(values["name"])
        if not diff:
            return {"guild": guild_view(guild)}
        if diff.get("is_main") == [False, True]:
            for other in await queries.clear_other_main(uow.conn, guild["id"]):
                await _changed(uow, principal, {**other, "is_main": False}, {"is_main": [True, False]})
        await guild_queries.update_guild_row(uow.conn, guild["id"], values)
        updated = await guild_queries.select_guild(uow.conn, guild["id"])
        assert updated is not None
        await _changed(uow, principal, updated, diff)
    return {"guild": guild_view(updated)}


async def _changed(uow: UnitOfWork, principal: Principal, guild: GuildRow, diff: dict[str, list[Any]]) -> None:
    await record(uow, "instance.guild_update", actor_id=principal.user_id, target_type="guild",
                 target_id=guild["id"], guild_id=guild["id"], data={"changes": diff})
    uow.emit(notify_guild_update(guild_view(guild), await guild_members(uow.conn, guild["id"])))


async def do_delete_instance_guild(rt: Runtime, principal: Principal, raw_id: str) -> None:
    """Delete any server, as its owner's deletion does (GUILD_DELETE `deleted`, files, voice participants
    leave), audited as `instance.guild_delete`."""
    require_admin(principal)
    async with rt.uow() as uow:
        guild = await _load_guild(uow, raw_id)
        require_step_up(rt, principal)
        await remove_guild(rt, uow, guild, principal.user_id, "instance.guild_delete")
    await access_changed(rt, guild["id"])

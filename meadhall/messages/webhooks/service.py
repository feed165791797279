"""Room webhooks: list, create, rename or move, delete, token regeneration (OpenAPI: listChannelWebhooks,
listGuildWebhooks, createWebhook, getWebhook, updateWebhook, deleteWebhook, regenerateWebhookToken;
docs/webhooks.md).

Everything needs MANAGE_WEBHOOKS in the webhook's room (a webhook in a room the caller cannot view is
not found; one they can view but may not manage answers 403). Creating one and making a new token also
need a recent step-up. The token is shown once, in the answer that made it; only its SHA-256 digest is
kept, so an old token stops working the moment a new one is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from meadhall.accounts.signin import require_step_up
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.crypto import new_token, token_digest
from meadhall.core.errors import AppError
from meadhall.core.ids import parse_id
from meadhall.core.limits import WEBHOOKS_PER_ROOM
from meadhall.db.uow import UnitOfWork
from meadhall.files.cleanup import drop_files
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.access import (
    ChannelContext,
    access_channel,
    access_guild,
    access_guild_channel,
    channel_permissions,
    require,
    require_in,
)
from meadhall.guilds.rooms import queries as room_queries
from meadhall.messages.webhooks import queries
from meadhall.messages.webhooks.queries import WebhookRow
from meadhall.messages.webhooks.views import webhook_view
from meadhall.runtime import Runtime

P = perms.P
WEBHOOK_ROOM_TYPES = ("text",)


@dataclass(frozen=True)
class Managed:
    """A webhook with the caller's view of its room, authorised for MANAGE_WEBHOOKS."""

    row: WebhookRow
    cc: ChannelContext


def _room_type(cc: ChannelContext) -> None:
    if cc.channel["type"] not in WEBHOOK_ROOM_TYPES:
        raise AppError("channel.wrong_type", "Webhooks live in text rooms")


async def access_webhook(uow: UnitOfWork, principal: Principal, raw_id: str) -> Managed:
    """404 `webhook.not_found` when unknown or in a room the caller cannot view; 403 without
    MANAGE_WEBHOOKS there."""
    webhook_id = parse_id(raw_id)
    row = None if webhook_id is None else await queries.select_webhook(uow.conn, webhook_id)
    if row is None:
        raise AppError("webhook.not_found")
    try:
        cc = await access_channel(uow.conn, principal, row["channel_id"], uow.now)
    except AppError as exc:
        if exc.code == "channel.not_found":
            raise AppError("webhook.not_found") from None
        raise
    require_in(cc, P.MANAGE_WEBHOOKS)
    return Managed(row, cc)


async def access_channel_webhooks(rt: Runtime, principal: Principal, raw_channel_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        cc = await access_channel(uow.conn, principal, raw_channel_id, uow.now)
        require_in(cc, P.MANAGE_WEBHOOKS)
        rows = await queries.select_webhooks_of_channel(uow.conn, cc.channel_id)
    return {"webhooks": [webhook_view(r) for r in rows]}


async def access_guild_webhooks(rt: Runtime, principal: Principal, raw_guild_id: str) -> dict[str, Any]:
    """MANAGE_WEBHOOKS in the server; the webhooks of the rooms where the caller holds it (an override
    may take it away in one room)."""
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.MANAGE_WEBHOOKS)
        overrides = await room_queries.select_guild_overrides(uow.conn, gc.guild_id)
        wanted = P.VIEW_CHANNEL | P.MANAGE_WEBHOOKS
        channel_ids = [c["id"] for c in await room_queries.select_channels(uow.conn, gc.guild_id)
                       if channel_permissions(gc, overrides.get(c["id"], [])) & wanted == wanted]
        rows = await queries.select_webhooks_of_guild(uow.conn, gc.guild_id, channel_ids)
    return {"webhooks": [webhook_view(r) for r in rows]}


async def do_create_webhook(rt: Runtime, principal: Principal, raw_channel_id: str, name: str) -> dict[str, Any]:
    """MANAGE_WEBHOOKS (403), step-up (403), a text room (422), at most WEBHOOKS_PER_ROOM (409)."""
    async with rt.uow() as uow:
        cc = await access_channel(uow.conn, principal, raw_channel_id, uow.now)
        require_in(cc, P.MANAGE_WEBHOOKS)
        require_step_up(rt, principal)
        _room_type(cc)
        await _check_room_has_space(uow, cc)
        token = new_token()
        row: WebhookRow = {"id": uow.next_id(), "guild_id": cc.guild.guild_id, "channel_id": cc.channel_id,
                           "name": name, "avatar_file_id": None, "creator_id": principal.user_id,
                           "token_hash": token_digest(token), "created_at": uow.now}
        await queries.insert_webhook(uow.conn, row)
        await record(uow, "webhook.create", actor_id=principal.user_id, target_type="webhook", target_id=row["id"],
                     guild_id=row["guild_id"], data={"name": name, "channel_id": str(row["channel_id"])})
    return {"webhook": webhook_view(row, token=token, origin=rt.settings.public_origin)}


async def _check_room_has_space(uow: UnitOfWork, cc: ChannelContext) -> None:
    # Concurrent creations would both pass the count (PostgreSQL): the guild's row lock orders them.
    await guild_queries.lock_guild(uow.conn, cc.guild.guild_id)
    if await queries.count_webhooks(uow.conn, cc.channel_id) >= WEBHOOKS_PER_ROOM:
        raise AppError("webhook.limit_reached")


async def access_one_webhook(rt: Runtime, principal: Principal, raw_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        found = await access_webhook(uow, principal, raw_id)
    return {"webhook": webhook_view(found.row)}


async def do_update_webhook(rt: Runtime, principal: Principal, raw_id: str, name: str | None,
                            raw_channel_id: str | None) -> dict[str, Any]:
    """Rename and/or move; a move needs MANAGE_WEBHOOKS in both rooms and a text room of the same server
    with space. Nothing changed writes nothing."""
    async with rt.uow() as uow:
        found = await access_webhook(uow, principal, raw_id)
        row = found.row
        values: dict[str, Any] = {}
        if name is not None and name != row["name"]:
            values["name"] = name
        if raw_channel_id is not None and parse_id(raw_channel_id) != row["channel_id"]:
            target = await access_guild_channel(uow.conn, found.cc.guild, raw_channel_id)
            _room_type(target)
            require_in(target, P.MANAGE_WEBHOOKS)
            await _check_room_has_space(uow, target)
            values["channel_id"] = target.channel_id
        if values:
            await queries.update_webhook(uow.conn, row["guild_id"], row["id"], values)
            changes = {k: [str(row[k]) if k == "channel_id" else row[k],  # type: ignore[literal-required]
                           str(v) if k == "channel_id" else v] for k, v in values.items()}
            await record(uow, "webhook.update", actor_id=principal.user_id, target_type="webhook",
                         target_id=row["id"], guild_id=row["guild_id"],
                         data={"name": values.get("name", row["name"]), "changes": changes})
            row = cast("WebhookRow", {**row, **values})
    return {"webhook": webhook_view(row)}


async def do_delete_webhook(rt: Runtime, principal: Principal, raw_id: str) -> None:
    """The avatar file goes once the deletion has committed; the messages keep their snapshot."""
    async with rt.uow() as uow:
        found = await access_webhook(uow, principal, raw_id)
        row = found.row
        await queries.delete_webhook_row(uow.conn, row["guild_id"], row["id"])
        await drop_files(uow, rt.files, [row["avatar_file_id"]])
        await record(uow, "webhook.delete", actor_id=principal.user_id, target_type="webhook", target_id=row["id"],
                     guild_id=row["guild_id"], data={"name": row["name"], "channel_id": str(row["channel_id"])})


async def do_regenerate_token(rt: Runtime, principal: Principal, raw_id: str) -> dict[str, Any]:
    """MANAGE_WEBHOOKS and step-up; the old token is refused from this commit on."""
    async with rt.uow() as uow:
        found = await access_webhook(uow, principal, raw_id)
        require_step_up(rt, principal)
        token = new_token()
        await queries.update_webhook(uow.conn, found.row["guild_id"], found.row["id"],
                                     {"token_hash": token_digest(token)})
        await record(uow, "webhook.token_reset", actor_id=principal.user_id, target_type="webhook",
                     target_id=found.row["id"], guild_id=found.row["guild_id"], data={"name": found.row["name"]})
    return {"webhook": webhook_view(found.row, token=token, origin=rt.settings.public_origin)}

"""SQL for room webhooks (docs/webhooks.md). Never commits."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, TypedDict, cast

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import webhooks


class WebhookRow(TypedDict):
    id: int
    guild_id: int
    channel_id: int
    name: str
    avatar_file_id: int | None
    creator_id: int
    token_hash: str
    created_at: datetime


_ORDER = (webhooks.c.id,)
async def select_webhook(conn: AsyncConnection, webhook_id: int) -> WebhookRow | None:
    """A webhook by its id alone: its paths name no parent (the caller's access is decided from its room)."""
    stmt = select(webhooks).where(webhooks.c.id == webhook_id)
    return cast("WebhookRow | None", (await conn.execute(stmt)).mappings().first())


async def select_webhooks_of_channel(conn: AsyncConnection, channel_id: int) -> list[WebhookRow]:
    stmt = select(webhooks).where(webhooks.c.channel_id == channel_id).order_by(*_ORDER)
    return cast("list[WebhookRow]", list((await conn.execute(stmt)).mappings()))


async def select_webhooks_of_guild(conn: AsyncConnection, guild_id: int, channel_ids: Iterable[int]
                                   ) -> list[WebhookRow]:
    """The guild's webhooks in the given rooms (those the caller manages)."""
    ids = sorted(set(channel_ids))
    if not ids:
        return []
    stmt = (select(webhooks).where(webhooks.c.guild_id == guild_id, webhooks.c.channel_id.in_(ids))
            .order_by(webhooks.c.channel_id, *_ORDER))
    return cast("list[WebhookRow]", list((await conn.execute(stmt)).mappings()))


async def count_webhooks(conn: AsyncConnection, channel_id: int) -> int:
    stmt = select(func.count()).select_from(webhooks).where(webhooks.c.channel_id == channel_id)
    return int((await conn.execute(stmt)).scalar_one())


async def insert_webhook(conn: AsyncConnection, row: WebhookRow) -> None:
    await conn.execute(insert(webhooks).values(dict(row)))


async def update_webhook(conn: AsyncConnection, guild_id: int, webhook_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(webhooks).where(webhooks.c.guild_id == guild_id, webhooks.c.id == webhook_id)
                       .values(**values))


async def delete_webhook_row(conn: AsyncConnection, guild_id: int, webhook_id: int) -> None:
    await conn.execute(delete(webhooks).where(webhooks.c.guild_id == guild_id, webhooks.c.id == webhook_id))

"""SQL of the link-preview cache (docs/outbound.md): one row per normalised URL, shared by every node."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db import dialect
from meadhall.db.schema import link_previews


class PreviewRow(TypedDict):
    url_hash: str
    url: str
    status: str
    card: dict[str, Any] | None
    fetched_at: datetime
    expires_at: datetime


async def select_preview(conn: AsyncConnection, url_hash: str) -> PreviewRow | None:
    row = (await conn.execute(select(link_previews).where(link_previews.c.url_hash == url_hash))).mappings().first()
    return None if row is None else PreviewRow(**row)  # type: ignore[typeddict-item]  # the table's columns


async def upsert_preview(conn: AsyncConnection, row: PreviewRow) -> None:
    await conn.execute(dialect.upsert(conn, link_previews, dict(row), ["url_hash"],
                                      ["url", "status", "card", "fetched_at", "expires_at"]))


async def delete_expired_previews(conn: AsyncConnection, now: datetime) -> int:
    result = await conn.execute(delete(link_previews).where(link_previews.c.expires_at <= now))
    return int(result.rowcount or 0)

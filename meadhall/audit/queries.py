"""SQL over the audit store (API.md 2.29): one page of entries, newest first, with the actor's user row
joined in the same query. Shared by the guild audit log and the instance audit log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import RowMapping, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import audit_log, users

_ACTOR_PREFIX = "actor__"


@dataclass(frozen=True)
class AuditFilters:
    guild_id: int | None = None  # None = every scope (instance audit log)
    action: str | None = None
    actor_id: int | None = None
    target_id: int | None = None
    before_id: int | None = None


async def audit_page(conn: AsyncConnection, filters: AuditFilters, limit: int) -> tuple[list[RowMapping], bool]:
    """Up to `limit` entries matching the filters, id descending, and whether more exist beyond them."""
    actor_columns = [c.label(_ACTOR_PREFIX + c.name) for c in users.c]
    stmt = select(audit_log, *actor_columns).outerjoin(users, users.c.id == audit_log.c.actor_id)
    if filters.guild_id is not None:
        stmt = stmt.where(audit_log.c.guild_id == filters.guild_id)
    if filters.action is not None:
        stmt = stmt.where(audit_log.c.action == filters.action)
    if filters.actor_id is not None:
        stmt = stmt.where(audit_log.c.actor_id == filters.actor_id)
    if filters.target_id is not None:
        stmt = stmt.where(audit_log.c.target_id == filters.target_id)
    if filters.before_id is not None:
        stmt = stmt.where(audit_log.c.id < filters.before_id)
    stmt = stmt.order_by(audit_log.c.id.desc()).limit(limit + 1)
    rows = list((await conn.execute(stmt)).mappings())
    return rows[:limit], len(rows) > limit


def actor_row(row: RowMapping) -> dict[str, Any] | None:
    """The joined users columns of an `audit_page` row, keyed as in the users table; None when the
    entry has no actor (CLI or system) or the user row is gone."""
    if row[_ACTOR_PREFIX + "id"] is None:
        return None
    return {key[len(_ACTOR_PREFIX):]: row[key] for key in row.keys() if key.startswith(_ACTOR_PREFIX)}

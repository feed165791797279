"""SQL over the audit store: one page of entries, newest first, with the actor's user row joined in the
same query (OpenAPI: listAuditLog). Shared by the guild audit log and the instance audit log.
Returns typed rows; never commits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict, cast

from sqlalchemy import RowMapping, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import audit_log, users

_ACTOR_PREFIX = "actor__"


class AuditEntryRow(TypedDict):
    """One row of `audit_log`."""

    id: int
    action: str
    guild_id: int | None
    actor_id: int | None
    target_type: str | None
    target_id: int | None
    reason: str | None
    data: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class AuditPageRow:
    """An entry with its actor's columns of `users` (None: no actor, the CLI or the system, or the user
    row is gone). The actor stays a mapping: the accounts domain, above audit, owns the user's shape."""

    entry: AuditEntryRow
    actor: Mapping[str, Any] | None


@dataclass(frozen=True)
class AuditFilters:
    guild_id: int | None = None  # None = every scope (instance audit log)
    action: str | None = None
    actor_id: int | None = None
    target_id: int | None = None
    before_id: int | None = None


_ENTRY_KEYS = tuple(c.name for c in audit_log.c)


async def select_audit_page(conn: AsyncConnection, filters: AuditFilters, limit: int
                            ) -> tuple[list[AuditPageRow], bool]:
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
    return [_page_row(r) for r in rows[:limit]], len(rows) > limit


def _page_row(row: RowMapping) -> AuditPageRow:
    entry = cast(AuditEntryRow, {key: row[key] for key in _ENTRY_KEYS})  # the keys are the table's columns
    return AuditPageRow(entry, _actor(row))


def _actor(row: RowMapping) -> dict[str, Any] | None:
    if row[_ACTOR_PREFIX + "id"] is None:
        return None
    return {key[len(_ACTOR_PREFIX):]: row[key] for key in row.keys() if key.startswith(_ACTOR_PREFIX)}

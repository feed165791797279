"""SQL over the audit store: one page of entries, newest first, with the actor's user row joined in the
same query (OpenAPI: listAuditLog). Shared by the guild audit log and the instance audit log. Also the
hash chain's heads and its entries in id order (audit/chain.py, audit/keying.py). Never commits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict, cast

from sqlalchemy import (
    Column,
    ColumnElement,
    Row,
    RowMapping,
    Select,
    bindparam,
    func,
    literal_column,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db import dialect
from meadhall.db.schema import audit_log, users
from meadhall.db.schema.audit import audit_chain_heads

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
    created_from: datetime | None = None  # inclusive
    created_to: datetime | None = None  # exclusive


_ENTRY_KEYS = tuple(c.name for c in audit_log.c if c.name not in ("prev_hash", "hash"))


def _conditions(filters: AuditFilters) -> list[ColumnElement[bool]]:
    """The filters without the cursor: what `total` counts (OpenAPI: listInstanceAuditLog)."""
    out: list[ColumnElement[bool]] = []
    if filters.guild_id is not None:
        out.append(audit_log.c.guild_id == filters.guild_id)
    if filters.action is not None:
        out.append(audit_log.c.action == filters.action)
    if filters.actor_id is not None:
        out.append(audit_log.c.actor_id == filters.actor_id)
    if filters.target_id is not None:
        out.append(audit_log.c.target_id == filters.target_id)
    if filters.created_from is not None:
        out.append(audit_log.c.created_at >= filters.created_from)
    if filters.created_to is not None:
        out.append(audit_log.c.created_at < filters.created_to)
    return out


def _page_statement(filters: AuditFilters, limit: int, sparse: bool, actor_columns: Sequence[Column[Any]]
                    ) -> Select[Any]:
    """Entries id descending joined to their actor. `sparse`: the matches are few and may lie anywhere in
    the table (a time window in the past), so they are collected through the created_at index and
    sorted, instead of walking the primary key back from the newest entry past every later one; ordering
    by `id + 0` is what keeps the planner off the primary key. The actor is joined to the page only, with
    the columns the caller names (a whole `users` row is ~40 columns to decode per entry)."""
    stmt = select(*(audit_log.c[k] for k in _ENTRY_KEYS)).where(*_conditions(filters))
    if filters.before_id is not None:
        stmt = stmt.where(audit_log.c.id < filters.before_id)
    order = (audit_log.c.id + literal_column("0")) if sparse else audit_log.c.id
    page = stmt.order_by(order.desc()).limit(limit + 1).subquery("page")
    actor = [c.label(_ACTOR_PREFIX + c.name) for c in actor_columns]
    return (select(*page.c, *actor).outerjoin(users, users.c.id == page.c.actor_id)
            .order_by(page.c.id.desc()))


async def select_audit_page(conn: AsyncConnection, filters: AuditFilters, limit: int, *,
                            actor_columns: Sequence[Column[Any]], sparse: bool = False
                            ) -> tuple[list[AuditPageRow], bool]:
    """Up to `limit` entries matching the filters, id descending, and whether more exist beyond them.
    `actor_columns`: the columns of `users` the caller needs of each entry's actor (`id` among them)."""
    stmt = _page_statement(filters, limit, sparse, actor_columns)
    rows = list((await conn.execute(stmt)).mappings())
    actor_keys = [(_ACTOR_PREFIX + c.name, c.name) for c in actor_columns]
    return [_page_row(r, actor_keys) for r in rows[:limit]], len(rows) > limit


async def count_audit_entries(conn: AsyncConnection, filters: AuditFilters) -> int:
    """How many entries match the filters, the cursor ignored."""
    stmt = select(func.count()).select_from(audit_log).where(*_conditions(filters))
    return int((await conn.execute(stmt)).scalar_one())


def _page_row(row: RowMapping, actor_keys: list[tuple[str, str]]) -> AuditPageRow:
    entry = cast(AuditEntryRow, {key: row[key] for key in _ENTRY_KEYS})  # the keys are the table's columns
    actor = None if row[_ACTOR_PREFIX + "id"] is None else {name: row[label] for label, name in actor_keys}
    return AuditPageRow(entry, actor)


# ---- the hash chain's heads and entries (audit/chain.py, audit/keying.py) ---------------------------------

_heads = audit_chain_heads.c
_ANY_WITHOUT_MAC = select(_heads.chain_key).where(_heads.mac.is_(None)).limit(1)
_ANY_WITH_MAC = select(_heads.chain_key).where(_heads.mac.is_not(None)).limit(1)
# In key order, so that two nodes keying at once lock the rows in the same order.
_UNMARKED = (select(_heads.chain_key, _heads.last_id, _heads.last_hash)
             .where(_heads.mac.is_(None), _heads.keyed_after.is_(None)).order_by(_heads.chain_key))
# Conditional: a node that keyed the head first (or a writer that advanced it) leaves nothing to match.
_KEY_HEAD = (update(audit_chain_heads)
             .where(_heads.chain_key == bindparam("b_key"), _heads.last_id == bindparam("b_last_id"),
                    _heads.mac.is_(None), _heads.keyed_after.is_(None))
             .values(keyed_after=bindparam("b_keyed_after"), mac=bindparam("b_mac")))


async def insert_audit_entry(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(audit_log.insert().values(**values))


async def upsert_chain_head(conn: AsyncConnection, key: str) -> Row[Any]:
    """The head's (last_id, last_hash, keyed_after), the row created when missing (keyed from its first entry),
    else locked (PostgreSQL: the upsert takes the row lock until commit)."""
    values = {"chain_key": key, "last_id": 0, "last_hash": None, "keyed_after": 0, "mac": None}
    stmt = dialect.upsert(conn, audit_chain_heads, values, keys=["chain_key"], update=["chain_key"])
    return (await conn.execute(stmt.returning(_heads.last_id, _heads.last_hash, _heads.keyed_after))).one()


async def update_chain_head(conn: AsyncConnection, key: str, **values: Any) -> None:
    await conn.execute(audit_chain_heads.update().where(_heads.chain_key == key).values(**values))


async def select_chain_heads(conn: AsyncConnection) -> list[RowMapping]:
    return list((await conn.execute(select(audit_chain_heads))).mappings())


async def select_audit_entries_after(conn: AsyncConnection, after: int, limit: int) -> list[RowMapping]:
    """Up to `limit` entries with an id above `after`, in id order (a keyset page)."""
    stmt = select(audit_log).where(audit_log.c.id > after).order_by(audit_log.c.id).limit(limit)
    return list((await conn.execute(stmt)).mappings())


async def select_any_head_without_mac(conn: AsyncConnection) -> bool:
    return (await conn.execute(_ANY_WITHOUT_MAC)).first() is not None


async def select_any_head_with_mac(conn: AsyncConnection) -> bool:
    return (await conn.execute(_ANY_WITH_MAC)).first() is not None


async def select_unmarked_heads(conn: AsyncConnection) -> list[RowMapping]:
    """Heads with neither marker nor HMAC: chain_key, last_id, last_hash, in key order."""
    return list((await conn.execute(_UNMARKED)).mappings())


async def update_unmarked_heads(conn: AsyncConnection, params: list[dict[str, Any]]) -> None:
    """Give unmarked heads their marker and HMAC (`b_key`, `b_last_id`, `b_keyed_after`, `b_mac` each)."""
    await conn.execute(_KEY_HEAD, params)

"""SQL of instance administration's users: the filtered list, the counts an AdminUser carries, and the
detail's servers, roles and audit entries. Never commits."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import ColumnElement, and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import UserRow
from meadhall.audit.queries import AuditEntryRow
from meadhall.core.text import norm
from meadhall.db import dialect
from meadhall.db.schema import audit_log, guilds, member_roles, members, roles, sessions, users
from meadhall.guilds.rows import GuildRow, RoleRow

# The columns of an audit entry as the API shows it (the chain's hashes stay out).
_AUDIT_COLUMNS = ("id", "action", "guild_id", "actor_id", "target_type", "target_id", "reason", "data",
                  "created_at")


@dataclass(frozen=True)
class UserFilter:
    q: str | None = None  # part of the username or display name, any case
    email_index: str | None = None  # the blind index of an exact email
    banned: bool = False  # instance-banned accounts only
    imported: bool = False  # imported authors only (docs/imported-authors.md)


def _where(conn: AsyncConnection, f: UserFilter) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = []
    if f.q:
        where.append(dialect.user_name_contains(conn, norm(f.q)))  # through a trigram index (docs/admin.md)
    if f.email_index is not None:
        where.append(users.c.email_index == f.email_index)
    if f.banned:
        where.append(users.c.banned_at.is_not(None))
    if f.imported:
        where.append(users.c.imported.is_(True))
    return where


async def select_user_page(conn: AsyncConnection, f: UserFilter, before: int | None, limit: int) -> list[UserRow]:
    """Newest first; `limit + 1` rows at most, the extra one telling that more follow."""
    if f.q:
        await dialect.plan_with_values(conn)
    # The ids first, then their rows: the filters read only columns of the narrow user-list index, so a
    # search that must scan (a rare short part) walks that index instead of every row.
    ids = select(users.c.id).where(*_where(conn, f))
    if before is not None:
        ids = ids.where(users.c.id < before)
    ids = ids.order_by(users.c.id.desc()).limit(limit + 1).correlate(None)
    stmt = select(users).where(users.c.id.in_(ids)).order_by(users.c.id.desc())
    return cast("list[UserRow]", list((await conn.execute(stmt)).mappings()))


async def kept_user_count(conn: AsyncConnection, f: UserFilter) -> int | None:
    """`count_users(f)` as the database keeps it, when it keeps one for this filter (a part of one or two
    characters and nothing else: docs/admin.md); None otherwise."""
    if f.q and f.email_index is None and not f.banned and not f.imported:
        return await dialect.count_users_with_short_part(conn, norm(f.q))
    return None


async def count_users(conn: AsyncConnection, f: UserFilter) -> int:
    if f.q:
        await dialect.plan_with_values(conn)
    return int((await conn.execute(select(func.count()).select_from(users).where(*_where(conn, f)))).scalar_one())


async def count_sessions_by_user(conn: AsyncConnection, user_ids: Iterable[int]) -> dict[int, int]:
    """user id -> stored sessions, for many users in one query (absent: none)."""
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    stmt = select(sessions.c.user_id, func.count()).where(sessions.c.user_id.in_(ids)).group_by(sessions.c.user_id)
    return {int(uid): int(n) for uid, n in (await conn.execute(stmt)).all()}


async def count_guilds_by_user(conn: AsyncConnection, user_ids: Iterable[int]) -> dict[int, int]:
    """user id -> guild memberships, for many users in one query (absent: none)."""
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    stmt = select(members.c.user_id, func.count()).where(members.c.user_id.in_(ids)).group_by(members.c.user_id)
    return {int(uid): int(n) for uid, n in (await conn.execute(stmt)).all()}


async def select_memberships(conn: AsyncConnection, user_id: int) -> list[tuple[GuildRow, Any]]:
    """(guild, joined_at) of every guild the user is a member of, oldest membership first."""
    stmt = (select(guilds, members.c.joined_at.label("member_joined_at"))
            .join(members, members.c.guild_id == guilds.c.id)
            .where(members.c.user_id == user_id)
            .order_by(members.c.joined_at, guilds.c.id))
    out: list[tuple[GuildRow, Any]] = []
    for row in (await conn.execute(stmt)).mappings():
        guild = {c.name: row[c.name] for c in guilds.c}
        out.append((cast(GuildRow, guild), row["member_joined_at"]))
    return out


async def select_held_roles(conn: AsyncConnection, user_id: int) -> dict[int, list[RoleRow]]:
    """guild id -> the roles the user holds there (highest first), for every guild in one query."""
    stmt = (select(roles).join(member_roles, and_(member_roles.c.role_id == roles.c.id,
                                                  member_roles.c.guild_id == roles.c.guild_id))
            .where(member_roles.c.user_id == user_id)
            .order_by(roles.c.guild_id, roles.c.position.desc(), roles.c.id))
    held: dict[int, list[RoleRow]] = {}
    for row in (await conn.execute(stmt)).mappings():
        held.setdefault(row["guild_id"], []).append(cast(RoleRow, row))
    return held


async def select_audit_of_user(conn: AsyncConnection, user_id: int, limit: int) -> list[AuditEntryRow]:
    """The latest entries in which the user acted or was the target, newest first."""
    stmt = (select(*(audit_log.c[name] for name in _AUDIT_COLUMNS))
            .where(or_(audit_log.c.actor_id == user_id,
                       and_(audit_log.c.target_type == "user", audit_log.c.target_id == user_id)))
            .order_by(audit_log.c.id.desc()).limit(limit))
    return cast("list[AuditEntryRow]", list((await conn.execute(stmt)).mappings()))


async def update_ban(conn: AsyncConnection, user_id: int, values: dict[str, Any], *, banned: bool) -> bool:
    """Write the ban columns only while the account's ban state is `banned`: whether it did. Two
    administrators banning at once: one bans, the other gets the conflict."""
    state = users.c.banned_at.is_not(None) if banned else users.c.banned_at.is_(None)
    result = await conn.execute(update(users).where(users.c.id == user_id, state).values(**values))
    return result.rowcount == 1

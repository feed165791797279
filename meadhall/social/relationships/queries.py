"""SQL for relationships (docs/social.md): one row per direction, `type` being what `other_id` is to
`user_id`. Returns typed rows (a cast, as meadhall/guilds/rows.py explains); never commits."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TypedDict, cast

from sqlalchemy import and_, bindparam, delete, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import SUMMARY_COLUMNS, SummaryRow, UserRow
from meadhall.core.text import escape_like
from meadhall.db import dialect
from meadhall.db.schema import relationship_stamps, relationships, users


class RelationshipRow(TypedDict):
    """One row of `relationships`."""

    user_id: int
    other_id: int
    type: str
    since: datetime


class RelatedUser(SummaryRow):
    """A relationship of the listing user joined with the other user's summary columns, plus the
    relationship's own type and since, under names that no user column has."""

    rel_type: str
    rel_since: datetime


async def select_live_user_by_username(conn: AsyncConnection, username_norm: str) -> UserRow | None:
    """A live user by login, matched with an escaped LIKE over the casefolded column (docs/social.md): the
    whole name, `%`, `_` and `\\` taken literally."""
    stmt = select(users).where(users.c.username_norm.like(escape_like(username_norm), escape="\\"),
                               users.c.deleted_at.is_(None)).limit(1)
    return cast("UserRow | None", (await conn.execute(stmt)).mappings().first())


async def select_pair_users(conn: AsyncConnection, a: int, b: int) -> dict[int, UserRow]:
    """Both users' rows, locked in id order: every change of a pair's relationship takes these locks first,
    so two requests about the same pair (both users befriending each other at once) run one after the
    other on PostgreSQL (SQLite writers are serialised anyway)."""
    stmt = select(users).where(users.c.id.in_([a, b])).order_by(users.c.id).with_for_update()
    return {row["id"]: cast(UserRow, row) for row in (await conn.execute(stmt)).mappings()}


async def select_pair(conn: AsyncConnection, a: int, b: int) -> tuple[RelationshipRow | None, RelationshipRow | None]:
    """(a's row about b, b's row about a) in one query."""
    stmt = select(relationships).where(or_(
        and_(relationships.c.user_id == a, relationships.c.other_id == b),
        and_(relationships.c.user_id == b, relationships.c.other_id == a)))
    rows = [cast(RelationshipRow, r) for r in (await conn.execute(stmt)).mappings()]
    mine = next((r for r in rows if r["user_id"] == a), None)
    theirs = next((r for r in rows if r["user_id"] == b), None)
    return mine, theirs


# Built once (READY and the relationships list run it): building it per call cost as much as SQLite's run.
_RELATED_USERS = (select(*SUMMARY_COLUMNS, relationships.c.type.label("rel_type"),
                         relationships.c.since.label("rel_since"))
                  .join(relationships, relationships.c.other_id == users.c.id)
                  .where(relationships.c.user_id == bindparam("user_id"))
                  .order_by(relationships.c.since, relationships.c.other_id))


async def select_related_users(conn: AsyncConnection, user_id: int) -> list[RelatedUser]:
    """Every relationship of the user with the other user's summary columns, oldest first, in one query (only
    those columns: 1,000 friends' full rows were a third of the query's time)."""
    return cast("list[RelatedUser]", (await conn.execute(_RELATED_USERS, {"user_id": user_id})).mappings().all())


# Built once (every status change runs it, through social/relationships/friends.py).
_FRIEND_IDS_UNLESS_STAMP = dialect.StampedIdArray(
    select(relationship_stamps.c.stamp).where(relationship_stamps.c.user_id == bindparam("user_id")).scalar_subquery(),
    relationships.c.other_id, relationships.c.user_id == bindparam("user_id"), relationships.c.type == "friend")


async def select_friend_ids_unless(conn: AsyncConnection, user_id: int, held: int | None
                                   ) -> tuple[int | None, list[int] | None]:
    """(the user's relationship stamp, their friends' ids in no particular order), the ids None when the stamp is
    `held`: the friends the caller keeps under it are still current."""
    return await _FRIEND_IDS_UNLESS_STAMP.read(conn, {"user_id": user_id}, held)


async def select_friend_ids(conn: AsyncConnection, user_ids: Sequence[int]) -> dict[int, list[int]]:
    """user id -> the ids of their friends, for many users in one query (presence receivers: the sweeper's; one
    user's are read through select_friend_ids_unless)."""
    stmt = (select(relationships.c.user_id, relationships.c.other_id)
            .where(relationships.c.user_id.in_(sorted(set(user_ids))), relationships.c.type == "friend")
            .order_by(relationships.c.user_id, relationships.c.other_id))
    found: dict[int, list[int]] = {}
    for user_id, other_id in (await conn.execute(stmt)).all():
        found.setdefault(user_id, []).append(other_id)
    return found


async def insert_relationship_row(conn: AsyncConnection, row: RelationshipRow) -> None:
    await conn.execute(insert(relationships).values(dict(row)))


async def update_relationship_row(conn: AsyncConnection, user_id: int, other_id: int, type_: str,
                                  since: datetime) -> None:
    await conn.execute(update(relationships)
                       .where(relationships.c.user_id == user_id, relationships.c.other_id == other_id)
                       .values(type=type_, since=since))


async def delete_relationship_row(conn: AsyncConnection, user_id: int, other_id: int) -> None:
    await conn.execute(delete(relationships)
                       .where(relationships.c.user_id == user_id, relationships.c.other_id == other_id))


async def select_rows_involving(conn: AsyncConnection, user_id: int) -> list[RelationshipRow]:
    """Every row naming the user on either side, locked (soft deletion of the account, docs/admin.md)."""
    stmt = (select(relationships)
            .where(or_(relationships.c.user_id == user_id, relationships.c.other_id == user_id))
            .order_by(relationships.c.user_id, relationships.c.other_id).with_for_update())
    return cast("list[RelationshipRow]", list((await conn.execute(stmt)).mappings()))


async def delete_rows_involving(conn: AsyncConnection, user_id: int) -> None:
    await conn.execute(delete(relationships)
                       .where(or_(relationships.c.user_id == user_id, relationships.c.other_id == user_id)))


async def select_block_between(conn: AsyncConnection, a: int, b: int) -> bool:
    """True when either user blocked the other."""
    stmt = select(relationships.c.user_id).where(
        relationships.c.type == "blocked",
        or_(and_(relationships.c.user_id == a, relationships.c.other_id == b),
            and_(relationships.c.user_id == b, relationships.c.other_id == a)),
    ).limit(1)
    return (await conn.execute(stmt)).first() is not None

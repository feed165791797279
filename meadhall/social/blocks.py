"""Whether a block stands between two users: the one question every social operation asks
(docs/social.md: blocks act in both directions)."""

from __future__ import annotations

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core.errors import AppError
from meadhall.db.schema import relationships


async def select_block_between(conn: AsyncConnection, a: int, b: int) -> bool:
    """True when either user blocked the other."""
    stmt = select(relationships.c.user_id).where(
        relationships.c.type == "blocked",
        or_(and_(relationships.c.user_id == a, relationships.c.other_id == b),
            and_(relationships.c.user_id == b, relationships.c.other_id == a)),
    ).limit(1)
    return (await conn.execute(stmt)).first() is not None


async def check_not_blocked(conn: AsyncConnection, a: int, b: int) -> None:
    """403 `relationship.blocked` when a block stands between the two."""
    if a != b and await select_block_between(conn, a, b):
        raise AppError("relationship.blocked", "A block exists between you and this user")

"""Whether a block stands between two users: the one question every social operation asks
(docs/social.md: blocks act in both directions)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core.errors import AppError
from meadhall.social.relationships.queries import select_block_between


async def check_not_blocked(conn: AsyncConnection, a: int, b: int) -> None:
    """403 `relationship.blocked` when a block stands between the two."""
    if a != b and await select_block_between(conn, a, b):
        raise AppError("relationship.blocked", "A block exists between you and this user")

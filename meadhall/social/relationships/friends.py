"""Each user's friends, kept per process under their relationship stamp (db/schema/social.py; derived registry
"relationship_stamp", this cache its entry "friends", db/derived.py): a status change of a user with 1,000 friends
reads one value instead of 1,000 ids (0.15 -> 0.03 ms on SQLite, docs/benchmarks.md).

The stamp and the ids are read by one statement, so a kept list is exactly the one its stamp stands for; a stamp
never repeats, so a list kept by a transaction that rolled back can never be taken for a later one. Every node
reads the stamp from the database: a block made on another node is seen by the next status change here.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.kept import VersionedCache
from meadhall.social.relationships import queries

# user id -> friends' ids, under the stamp; the bound counts the ids, all users together.
KEPT: VersionedCache[int, int, tuple[int, ...]] = VersionedCache("friends", len)


async def friend_ids_of(conn: AsyncConnection, user_id: int) -> tuple[int, ...]:
    """The ids of the user's friends, in the order the database gave them (an event sorts its audience if need be)."""
    kept_here = KEPT.scope(conn)
    kept = kept_here.entry(user_id)
    # kept by trigger: see derived registry "relationship_stamp"
    stamp, ids = await queries.select_friend_ids_unless(conn, user_id, None if kept is None else kept[0])
    if ids is None and kept is not None:
        return kept[1]
    friends = tuple(ids or ())
    if stamp is not None:
        kept_here.put(user_id, stamp, friends)
    return friends


async def friends_lookup(conn: AsyncConnection, user_ids: Sequence[int]) -> dict[int, list[int]]:
    """The presence slot's lookup (accounts/presence.py): one user (a status change, coming online) through the
    kept lists, several (the sweeper) in one query."""
    if len(user_ids) != 1:
        return await queries.select_friend_ids(conn, user_ids)
    friends = await friend_ids_of(conn, user_ids[0])
    return {user_ids[0]: list(friends)} if friends else {}

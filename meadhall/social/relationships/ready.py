"""The relationship parts of READY (docs/gateway.md, docs/social.md): the four lists, as GET
/users/@me/relationships answers them, and the presences of the friends who are not offline. One query
whatever the number of friends, and no store read: the effective status comes from `users.last_seen_at`,
which activity keeps within a minute and a half of the truth, well inside the 2-minute mark."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.presence import friends_styles
from meadhall.accounts.views import Summaries
from meadhall.social.relationships.queries import select_related_users
from meadhall.social.relationships.views import friend_ids, relationship_lists


async def ready_relationships(conn: AsyncConnection, user_id: int, summaries: Summaries
                              ) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """(READY `relationships`, READY `presences`); `summaries`: shared with READY's other parts."""
    rows = await select_related_users(conn, user_id)
    styles = await friends_styles(conn, friend_ids(rows))
    lists = relationship_lists(rows, summaries.now, summaries, styles)
    # The presences reuse the summaries and styles of the friends list (READY of 1,000 friends: half its
    # build time).
    presences = [{"user": rel["user"], "style": rel["style"]} for rel in lists["friends"]
                 if rel["user"]["status"] != "offline"]
    return lists, presences

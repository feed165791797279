"""Serialise relationships into the API's Relationship object and the lists of GET /users/@me/relationships
(OpenAPI: listRelationships; the same lists travel in READY, docs/social.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from meadhall.accounts.views import Summaries, UserColumns, user_summary
from meadhall.core.clock import iso
from meadhall.social.relationships.queries import RelatedUser

TYPES = ("friend", "incoming", "outgoing", "blocked")
# The list each type is shown in.
LISTS = {"friend": "friends", "incoming": "incoming", "outgoing": "outgoing", "blocked": "blocked"}


def relationship_view(other: UserColumns, type_: str, since: datetime, now: datetime,
                      style: dict[str, Any] | None = None) -> dict[str, Any]:
    """The relationship as its owner sees it: `id` and `user` are the other user. `style` is the other
    user's `friends`-scope style, shown to friends only."""
    return {"id": str(other["id"]), "type": type_, "user": user_summary(other, now), "since": iso(since),
            "style": style if type_ == "friend" else None}


def friend_ids(rows: list[RelatedUser]) -> list[int]:
    return [row["id"] for row in rows if row["rel_type"] == "friend"]


def relationship_lists(rows: list[RelatedUser], now: datetime, summaries: Summaries | None = None,
                       styles: dict[int, dict[str, Any]] | None = None) -> dict[str, list[dict[str, Any]]]:
    """`summaries`: those already made for the same answer (READY), filled with the ones made here;
    `styles`: the friends' `friends`-scope styles (presence.friends_styles)."""
    made = Summaries(now) if summaries is None else summaries
    styles = styles or {}
    lists: dict[str, list[dict[str, Any]]] = {name: [] for name in LISTS.values()}
    for row in rows:
        type_ = row["rel_type"]
        style = styles.get(row["id"]) if type_ == "friend" else None
        lists[LISTS[type_]].append({"id": str(row["id"]), "type": type_, "user": made.of(row),
                                    "since": iso(row["rel_since"]), "style": style})
    return lists

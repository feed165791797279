"""Serialise relationships into the API's Relationship object and the lists of GET /users/@me/relationships
(OpenAPI: listRelationships; the same lists travel in READY, docs/social.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from meadhall.accounts.views import Summaries, UserColumns, iso_recalled, user_summary
from meadhall.core.clock import iso
from meadhall.social.relationships.queries import RelatedUser

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
    summary_of, style_of = made.of, (styles or {}).get
    lists: dict[str, list[dict[str, Any]]] = {name: [] for name in LISTS.values()}
    # A READY lists a thousand friends: each list's append is looked up once, not per row.
    append_to = {type_: lists[name].append for type_, name in LISTS.items()}
    for row in rows:
        type_ = row["rel_type"]
        summary = summary_of(row)
        # The summary's id is the other user's, already written out.
        append_to[type_]({"id": summary["id"], "type": type_, "user": summary, "since": iso_recalled(row["rel_since"]),
                          "style": style_of(row["id"]) if type_ == "friend" else None})
    return lists

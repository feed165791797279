"""Build Message objects for many rows at once: authors, reactions and replied messages are loaded in
a fixed number of queries for the whole page, never one per message."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.views import user_summary
from meadhall.files.attachments import attachment_views
from meadhall.messages import queries
from meadhall.messages.views import message_view, webhook_snapshot


def _visible(row: RowMapping, viewer_id: int) -> bool:
    return row["kind"] != "private" or viewer_id in (row["author_id"], row["recipient_id"])


async def hydrate(conn: AsyncConnection, rows: list[RowMapping], viewer_id: int, now: datetime,
                  *, with_reactions: bool = True, with_attachments: bool = True) -> list[dict[str, Any]]:
    if not rows:
        return []
    channel_id = rows[0]["channel_id"]
    reply_ids = [r["reply_to_id"] for r in rows if r["reply_to_id"] is not None]
    replied = await queries.messages_by_ids(conn, channel_id, reply_ids)
    author_ids = {r["author_id"] for r in rows if r["author_id"] is not None}
    author_ids |= {r["author_id"] for r in replied.values() if r["author_id"] is not None}
    authors = await queries.users_by_ids(conn, author_ids)
    summaries = {uid: user_summary(row, now) for uid, row in authors.items()}
    # Most messages have neither: the flags (set by triggers) spare a page both queries.
    reacted = [r["id"] for r in rows if r["reacted"]] if with_reactions else None
    reactions = await _reactions(conn, reacted, viewer_id) if reacted else {}
    attached = [r["id"] for r in rows if r["has_attachments"]] if with_attachments else None
    files = await attachment_views(conn, attached) if attached else {}
    out = []
    for row in rows:
        ref = replied.get(row["reply_to_id"]) if row["reply_to_id"] is not None else None
        referenced = None
        if ref is not None and _visible(ref, viewer_id):
            referenced = {"id": str(ref["id"]), "author": summaries.get(ref["author_id"]),
                          "content": ref["content"], "kind": ref["kind"], "webhook": webhook_snapshot(ref)}
        out.append(message_view(row, author=summaries.get(row["author_id"]), reactions=reactions.get(row["id"], []),
                                referenced=referenced, attachments=files.get(row["id"])))
    return out


async def _reactions(conn: AsyncConnection, message_ids: list[int], viewer_id: int) -> dict[int, list[dict[str, Any]]]:
    result: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in await queries.reaction_rows(conn, message_ids, viewer_id):
        result[row["message_id"]].append({"emoji": row["emoji"], "count": int(row["count"]), "me": bool(row["me"])})
    return result


async def hydrate_one(conn: AsyncConnection, row: RowMapping, viewer_id: int, now: datetime) -> dict[str, Any]:
    return (await hydrate(conn, [row], viewer_id, now))[0]


async def audience_views(conn: AsyncConnection, row: RowMapping, view: dict[str, Any], audience: list[int],
                         now: datetime) -> list[tuple[dict[str, Any], list[int]]]:
    """Split an event's audience by what differs per receiver in a full Message: the replied message,
    and `reactions[].me`."""
    groups = await _by_reference(conn, row, view, audience, now)
    if not view["reactions"]:
        return groups
    return await _by_own_reactions(conn, row["id"], groups)


async def _by_own_reactions(conn: AsyncConnection, message_id: int, groups: list[tuple[dict[str, Any], list[int]]]
                            ) -> list[tuple[dict[str, Any], list[int]]]:
    """`me` is the receiver's own reaction (the view was built for its caller): one group per distinct set
    of emojis the receivers reacted with."""
    own: dict[int, set[str]] = defaultdict(set)
    for user_id, emoji in await queries.reactors_of(conn, message_id):
        own[user_id].add(emoji)
    out = []
    for view, users in groups:
        split: dict[frozenset[str], list[int]] = defaultdict(list)
        for user_id in users:
            split[frozenset(own.get(user_id, ()))].append(user_id)
        for emojis, receivers in split.items():
            shown = [{**r, "me": r["emoji"] in emojis} for r in view["reactions"]]
            out.append(({**view, "reactions": shown}, receivers))
    return out


async def _by_reference(conn: AsyncConnection, row: RowMapping, view: dict[str, Any], audience: list[int],
                        now: datetime) -> list[tuple[dict[str, Any], list[int]]]:
    """A reply to a `private` message shows its reference only to that message's two parties (API.md 2.15,
    3.8.1)."""
    ref_id = row["reply_to_id"]
    ref = None if ref_id is None else await queries.get_message(conn, row["channel_id"], ref_id)
    if ref is None or ref["kind"] != "private":
        return [(view, audience)]
    parties = {ref["author_id"], ref["recipient_id"]}
    inside = [u for u in audience if u in parties]
    outside = [u for u in audience if u not in parties]
    groups = []
    if inside:
        # The view was built for its caller, who may be a moderator outside the two parties.
        shown = (await hydrate(conn, [row], ref["author_id"], now, with_reactions=False,
                               with_attachments=False))[0]["referenced_message"]
        groups.append(({**view, "referenced_message": shown}, inside))
    if outside:
        groups.append(({**view, "referenced_message": None}, outside))
    return groups

"""Build Message objects for many rows at once: authors, reactions and replied messages are loaded in
a fixed number of queries for the whole page, never one per message."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.views import Summaries, UserSummaryView, user_summary
from meadhall.messages import queries
from meadhall.messages.attachments import attachment_views
from meadhall.messages.rows import MessageFields, MessageRow
from meadhall.messages.views import MessageView, ReactionView, message_view, webhook_snapshot


def _visible(row: MessageFields, viewer_id: int) -> bool:
    return row["kind"] != "private" or viewer_id in (row["author_id"], row["recipient_id"])


@dataclass
class PageParts:
    """What a list of messages shows that is the same for every viewer: each message's view without its
    author, reactions and reference (`bases`), what those need (`keys`: id, author id, replied id, whether
    it ever had reactions) and the replied messages. Built once per page; history keeps it while the room's
    message version holds (messages/page_cache.py)."""

    bases: list[MessageView]
    keys: list[tuple[int, int | None, int | None, bool]]
    replied: dict[int, MessageRow]
    author_ids: set[int]


    def each(self) -> list[PageParts]:
        """The parts of each message alone (what a conversation list keeps per last message)."""
        out = []
        for base, key in zip(self.bases, self.keys, strict=True):
            ref = self.replied.get(key[2]) if key[2] is not None else None
            replied = {} if ref is None else {ref["id"]: ref}
            authors = {a for a in (key[1], None if ref is None else ref["author_id"]) if a is not None}
            out.append(PageParts([base], [key], replied, authors))
        return out

    @staticmethod
    def joined(parts: Sequence[PageParts]) -> PageParts:
        return PageParts([b for p in parts for b in p.bases], [k for p in parts for k in p.keys],
                         {i: r for p in parts for i, r in p.replied.items()}, set().union(*(p.author_ids for p in parts)))


async def page_parts(conn: AsyncConnection, rows: Sequence[MessageFields], *, with_attachments: bool = True) -> PageParts:
    if not rows:
        return PageParts([], [], {}, set())
    replied = await _replied(conn, rows)
    # Most messages have no files: the flag spares a page the query.
    # kept by trigger: see derived registry "has_attachments" and "reacted"
    attached = [r["id"] for r in rows if r["has_attachments"]] if with_attachments else None
    files = await attachment_views(conn, attached) if attached else {}
    keys = [(r["id"], r["author_id"], r["reply_to_id"], bool(r["reacted"])) for r in rows]
    author_ids = {k[1] for k in keys if k[1] is not None}
    author_ids |= {r["author_id"] for r in replied.values() if r["author_id"] is not None}
    bases = [message_view(row, attachments=files.get(key[0]))
             for row, key in zip(rows, keys, strict=True)]
    return PageParts(bases, keys, replied, author_ids)


async def _replied(conn: AsyncConnection, rows: Sequence[MessageFields]) -> dict[int, MessageRow]:
    """The messages the rows reply to: a page is one room; a list of conversations' last messages spans many."""
    pairs = [(r["channel_id"], r["reply_to_id"]) for r in rows if r["reply_to_id"] is not None]
    if not pairs:
        return {}
    if len({c for c, _ in pairs}) == 1:
        return await queries.select_messages_by_ids(conn, pairs[0][0], [m for _, m in pairs])
    return await queries.select_messages_in_rooms(conn, pairs)


async def assemble(conn: AsyncConnection, parts: PageParts, viewer_id: int, now: datetime, *,
                   with_reactions: bool = True, known_users: Mapping[int, Any] | None = None,
                   made: Summaries | None = None, parts_kept: bool = True) -> list[MessageView]:
    """The viewer's Message objects: authors as they are now, reactions with the viewer's `me`, and replied
    messages only where the viewer may see them. `known_users`: account rows read in this transaction;
    `made`: summaries already made for the same answer (a conversation list's participants);
    `parts_kept`: False when nobody keeps `parts` (no page cache), so their views are completed in place
    instead of copied (300 last messages of a conversation list)."""
    if not parts.bases:
        return []
    summaries = await author_summaries(conn, parts, now, known_users=known_users, made=made)
    reactions = await page_reactions(conn, parts, viewer_id) if with_reactions else {}
    return complete(parts, summaries, reactions, viewer_id, parts_kept=parts_kept)


Shown = dict[int | None, UserSummaryView]


async def author_summaries(conn: AsyncConnection, parts: PageParts, now: datetime, *,
                           known_users: Mapping[int, Any] | None = None, made: Summaries | None = None) -> Shown:
    """The authors of the page (and of the messages it replies to) as they are now."""
    known = known_users or {}
    authors = {**known, **await queries.select_authors(conn, parts.author_ids - known.keys())}
    # Keyed by `int | None`: a message without an author (system, webhook) looks up None and finds nothing.
    if made is None:
        return {uid: user_summary(authors[uid], now) for uid in parts.author_ids if uid in authors}
    return {uid: made.of(authors[uid]) for uid in parts.author_ids if uid in authors}


async def page_reactions(conn: AsyncConnection, parts: PageParts, viewer_id: int) -> dict[int, list[ReactionView]]:
    """The reactions of the page's messages, with the viewer's `me`."""
    # Most messages never had a reaction: the flag (set by a trigger) spares a page the query.
    reacted = [k[0] for k in parts.keys if k[3]]
    return await _reactions(conn, reacted, viewer_id) if reacted else {}


def complete(parts: PageParts, summaries: Shown, reactions: dict[int, list[ReactionView]], viewer_id: int, *,
             parts_kept: bool = True) -> list[MessageView]:
    """The Message objects of `parts` with their authors, reactions and the references the viewer may see."""
    out = []
    for base, (message_id, author_id, reply_id, _) in zip(parts.bases, parts.keys, strict=True):
        view = base.copy() if parts_kept else base
        view["author"] = summaries.get(author_id)
        if message_id in reactions:
            view["reactions"] = reactions[message_id]
        if reply_id is not None:
            ref = parts.replied.get(reply_id)
            if ref is not None and _visible(ref, viewer_id):
                view["referenced_message"] = {
                    "id": str(ref["id"]), "author": summaries.get(ref["author_id"]), "content": ref["content"],
                    "kind": ref["kind"], "webhook": webhook_snapshot(ref)}
        out.append(view)
    return out


async def hydrate(conn: AsyncConnection, rows: Sequence[MessageFields], viewer_id: int, now: datetime,
                  *, with_reactions: bool = True, with_attachments: bool = True,
                  known_users: dict[int, Any] | None = None, summaries: Summaries | None = None
                  ) -> list[MessageView]:
    parts = await page_parts(conn, rows, with_attachments=with_attachments)
    return await assemble(conn, parts, viewer_id, now, with_reactions=with_reactions, known_users=known_users,
                          made=summaries, parts_kept=False)


async def _reactions(conn: AsyncConnection, message_ids: list[int], viewer_id: int) -> dict[int, list[ReactionView]]:
    result: dict[int, list[ReactionView]] = defaultdict(list)
    for row in await queries.select_reactions(conn, message_ids, viewer_id):
        result[row["message_id"]].append({"emoji": row["emoji"], "count": int(row["count"]), "me": bool(row["me"])})
    return result


async def hydrate_one(conn: AsyncConnection, row: MessageFields, viewer_id: int, now: datetime) -> MessageView:
    return (await hydrate(conn, [row], viewer_id, now))[0]


async def audience_views(conn: AsyncConnection, row: MessageFields, view: MessageView, audience: list[int],
                         now: datetime) -> list[tuple[MessageView, list[int]]]:
    """Split an event's audience by what differs per receiver in a full Message: the replied message,
    and `reactions[].me`."""
    groups = await _by_reference(conn, row, view, audience, now)
    if not view["reactions"]:
        return groups
    return await _by_own_reactions(conn, row["id"], groups)


async def _by_own_reactions(conn: AsyncConnection, message_id: int, groups: list[tuple[MessageView, list[int]]]
                            ) -> list[tuple[MessageView, list[int]]]:
    """`me` is the receiver's own reaction (the view was built for its caller): one group per distinct set
    of emojis the receivers reacted with."""
    own: dict[int, set[str]] = defaultdict(set)
    for user_id, emoji in await queries.select_reaction_pairs(conn, message_id):
        own[user_id].add(emoji)
    out: list[tuple[MessageView, list[int]]] = []
    for view, users in groups:
        split: dict[frozenset[str], list[int]] = defaultdict(list)
        for user_id in users:
            split[frozenset(own.get(user_id, ()))].append(user_id)
        for emojis, receivers in split.items():
            shown: list[ReactionView] = [{**r, "me": r["emoji"] in emojis} for r in view["reactions"]]
            out.append(({**view, "reactions": shown}, receivers))
    return out


async def _by_reference(conn: AsyncConnection, row: MessageFields, view: MessageView, audience: list[int],
                        now: datetime) -> list[tuple[MessageView, list[int]]]:
    """A reply to a `private` message shows its reference only to that message's two parties (OpenAPI:
    getMessage, sendMessage)."""
    ref_id = row["reply_to_id"]
    ref = None if ref_id is None else await queries.select_message(conn, row["channel_id"], ref_id)
    if ref is None or ref["kind"] != "private":
        return [(view, audience)]
    parties = {ref["author_id"], ref["recipient_id"]}
    inside = [u for u in audience if u in parties]
    outside = [u for u in audience if u not in parties]
    groups: list[tuple[MessageView, list[int]]] = []
    if inside:
        # The view was built for its caller, who may be a moderator outside the two parties.
        # A private message is sent by a user, so it has its author.
        shown = (await hydrate(conn, [row], cast(int, ref["author_id"]), now, with_reactions=False,
                               with_attachments=False))[0]["referenced_message"]
        groups.append(({**view, "referenced_message": shown}, inside))
    if outside:
        groups.append(({**view, "referenced_message": None}, outside))
    return groups

"""The last messages of conversation lists, kept per process while their room's messages are unchanged.

A conversation list (and READY) shows the last message of every conversation: 300 conversations read and
built 300 messages per request, most of them the same as the request before. What such a message shows
that is the same for every viewer (messages/hydrate.PageParts of one message) is kept here under its room's
`message_version`, which triggers raise in the same transaction as any change to the room's messages
(migration 0010; derived registry "message_version", db/derived.py, where this cache is the entry
"last_messages"), reactions and files included: an entry is used only while the version read with the room
is the one it was built at, so an edit, a deletion, a pin or a new message on any node is seen by the next
request. Authors, reactions and whether the viewer may see a replied message are worked out for every
request (messages/hydrate.assemble), as for history pages (messages/page_cache.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.kept import VersionedCache
from meadhall.messages import queries as message_queries
from meadhall.messages.hydrate import PageParts, page_parts
from meadhall.messages.rows import MessageRow
from meadhall.messages.views import MessageView
from meadhall.social.conversations import queries

# Past this many messages to read, the user's rooms' last messages are read through their own rows in one
# statement (no list of pairs to expand and bind); below it, only the missing pairs are asked for.
READ_ALL_FROM = 16


class _Kept(NamedTuple):
    """One message's parts (PageParts.each)."""

    base: MessageView
    key: tuple[int, int | None, int | None, bool]
    replied: MessageRow | None
    author_ids: frozenset[int]


# (room id, message id) -> the message's parts, under the room's message version. The bound (4,096 messages of
# about 2.2 KiB by tracemalloc: the last messages of some 13 lists of 300 conversations) is the registry's.
KEPT: VersionedCache[tuple[int, int], int, _Kept] = VersionedCache("last_messages")


class LastMessage(NamedTuple):
    """The last message a receiver sees in a room, and the room's `message_version` read with it (a named
    tuple: a list makes 300 of them per request, and a frozen dataclass cost five times as much to make)."""

    channel_id: int
    message_id: int
    version: int


async def last_message_parts(conn: AsyncConnection, user_id: int, wanted: Sequence[LastMessage]) -> PageParts:
    """The parts of the `wanted` messages of the user's conversations, kept ones first, the others read in
    at most two statements. Joined as they are found rather than through PageParts.joined: 300 one-message
    parts cost more to join than to look up."""
    kept_here = KEPT.scope(conn)
    bases: list[MessageView] = []
    keys: list[tuple[int, int | None, int | None, bool]] = []
    replied: dict[int, MessageRow] = {}
    author_ids: set[int] = set()
    missing: list[LastMessage] = []
    get = kept_here.get
    for last in wanted:
        kept = get((last.channel_id, last.message_id), last.version)
        if kept is not None:
            bases.append(kept.base)
            keys.append(kept.key)
            if kept.replied is not None:
                replied[kept.replied["id"]] = kept.replied
            author_ids |= kept.author_ids
        else:
            missing.append(last)
    found = PageParts(bases, keys, replied, author_ids)
    if not missing:
        return found
    rows = await _rows(conn, user_id, missing)
    read = [last for last in missing if last.message_id in rows]
    made = (await page_parts(conn, [rows[last.message_id] for last in read])).each()
    for last, parts in zip(read, made, strict=True):
        ref = next(iter(parts.replied.values()), None)
        if not kept_here.put((last.channel_id, last.message_id), last.version,
                             _Kept(parts.bases[0], parts.keys[0], ref, frozenset(parts.author_ids))):
            break  # a transaction that already wrote keeps none of them
    return PageParts.joined([found, *made])


async def _rows(conn: AsyncConnection, user_id: int, missing: Sequence[LastMessage]) -> dict[int, MessageRow]:
    rows = await queries.select_last_messages(conn, user_id) if len(missing) >= READ_ALL_FROM else {}
    # A private last message is not its room's `last_message_id`: asked for by its pair.
    pairs = [(last.channel_id, last.message_id) for last in missing if last.message_id not in rows]
    if pairs:
        rows.update(await message_queries.select_messages_in_rooms(conn, pairs))
    return rows

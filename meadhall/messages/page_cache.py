"""History pages kept per process while their room's messages are unchanged.

Opening a room reads its newest page, so many clients read the same few pages. What a page shows that is
the same for every viewer (messages/hydrate.PageParts) is kept here under the room's `message_version`,
which triggers raise in the same transaction as any change to the room's messages (migration 0010): an
entry is used only while the version read with the room is the one it was built at, so an edit, a
deletion, a pin or a new message on any node is seen by the next request. Authors and reactions are read
for every request (profiles and reactions change without touching messages).

A room that ever held a `private` message shows each viewer a different page: its entries are per viewer.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.engine import WROTE_FLAG, engine_token
from meadhall.guilds.rows import ChannelRow
from meadhall.messages import queries
from meadhall.messages.hydrate import PageParts, page_parts

if TYPE_CHECKING:
    from meadhall.messages.history import Cursor

# A page of 50 messages takes about 85 KiB (measured with tracemalloc): at most about 11 MiB in all.
MAX_CACHED_PAGES = 128


@dataclass(frozen=True)
class _Entry:
    version: int
    parts: PageParts
    has_more: bool


_CACHE: OrderedDict[tuple[int, int, int | None, int | None, int, int], _Entry] = OrderedDict()


async def history_page(conn: AsyncConnection, channel: ChannelRow, viewer_id: int, page: Cursor
                       ) -> tuple[PageParts, bool]:
    """(the page's parts, has_more) for this viewer; `channel` is the room row read in this transaction."""
    scope = viewer_id if channel["has_private"] else 0
    key = (engine_token(conn), channel["id"], page.before, page.after, page.limit, scope)
    version = int(channel["message_version"])
    entry = _CACHE.get(key)
    if entry is not None and entry.version == version:
        _CACHE.move_to_end(key)
        return entry.parts, entry.has_more
    rows, more = await queries.select_page(conn, channel["id"], viewer_id, before=page.before, after=page.after,
                                    limit=page.limit)
    parts = await page_parts(conn, rows)
    # A transaction that already wrote may hold a version that never commits: use, don't keep.
    if not conn.info.get(WROTE_FLAG):
        _CACHE[key] = _Entry(version, parts, more)
        if len(_CACHE) > MAX_CACHED_PAGES:
            _CACHE.popitem(last=False)
    return parts, more

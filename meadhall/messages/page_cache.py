"""History pages kept per process while their room's messages are unchanged.

Opening a room reads its newest page, so many clients read the same few pages. What a page shows that is
the same for every viewer (messages/hydrate.PageParts) is kept here under the room's `message_version`,
which triggers raise in the same transaction as any change to the room's messages (derived registry
"message_version", db/derived.py; the cache is its entry "history_pages"): an
entry is used only while the version read with the room is the one it was built at, so an edit, a
deletion, a pin or a new message on any node is seen by the next request. Authors and reactions are read
for every request (profiles and reactions change without touching messages).

An entry also keeps the last answer it gave, encoded, with the author summaries it showed: a page without
reactions is the same bytes for every reader while those summaries are (messages/history.py), so a busy room's
newest page is assembled and encoded once, not once per reader.

A room that ever held a `private` message shows each viewer a different page: its entries are per viewer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.kept import VersionedCache
from meadhall.guilds.rows import ChannelRow
from meadhall.messages import queries
from meadhall.messages.hydrate import PageParts, page_parts

if TYPE_CHECKING:
    from meadhall.messages.history import Cursor


class Entry:
    """A kept page: its parts, whether more lie beyond it, and its last encoded answer (`shown`)."""

    __slots__ = ("parts", "has_more", "shown")

    def __init__(self, parts: PageParts, has_more: bool) -> None:
        self.parts, self.has_more = parts, has_more
        # (the author summaries shown, the answer's bytes); set by the history service.
        self.shown: tuple[object, bytes] | None = None


# (room id, before, after, limit, viewer id or 0) -> the page, under the room's message version; the bound (128
# pages of about 85 KiB, measured with tracemalloc) is the registry's.
PAGES: VersionedCache[tuple[int, int | None, int | None, int, int], int, Entry] = VersionedCache("history_pages")


async def history_page(conn: AsyncConnection, channel: ChannelRow, viewer_id: int, page: Cursor) -> Entry:
    """The page for this viewer; `channel` is the room row read in this transaction."""
    # kept by trigger: see derived registry "has_private" and "message_version"
    scope = viewer_id if channel["has_private"] else 0
    key = (channel["id"], page.before, page.after, page.limit, scope)
    version = int(channel["message_version"])
    entry = PAGES.get(conn, key, version)
    if entry is not None:
        return entry
    rows, more = await queries.select_page(conn, channel["id"], viewer_id, before=page.before, after=page.after,
                                    limit=page.limit)
    entry = Entry(await page_parts(conn, rows), more)
    PAGES.put(conn, key, version, entry)
    return entry

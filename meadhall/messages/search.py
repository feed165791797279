"""Per-room message search (OpenAPI: searchMessages; docs/reference/limits.md).

Every word of the query must occur in the message (AND); the last word matches as a prefix, the others as
whole words through the full-text index or as substrings through the substring path, and both results are
merged without duplicates. Since a whole word and a prefix are substrings as well, the merged result is
"every word occurs as a substring": that is what db/dialect.py computes, with the indexes of each database.
Matching is on `content_norm` (NFKC + casefold) with the query normalised the same way, so case does not
matter in any script. Words are data, never syntax: no LIKE wildcard or FTS operator in them has effect.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.auth.sessions import Principal
from meadhall.core.errors import validation_error
from meadhall.core.ids import parse_id
from meadhall.core.text import norm
from meadhall.db import dialect
from meadhall.messages import queries
from meadhall.messages.hydrate import hydrate
from meadhall.messages.rooms import access_message_room
from meadhall.messages.rows import MessageRow
from meadhall.runtime import Runtime

QUERY_LENGTH = 200  # docs/reference/limits.md: `q` has 1-200 characters after trimming


@dataclass(frozen=True)
class SearchRequest:
    """The raw query parameters."""

    q: str
    before: str | None
    limit: int


@dataclass(frozen=True)
class SearchQuery:
    words: tuple[str, ...]  # normalised, in query order, without repeats; the last one is the prefix
    before: int | None
    limit: int


def check_query(request: SearchRequest) -> SearchQuery:
    """422 `validation.failed` for an empty or too long `q`, or a malformed `before`."""
    q = request.q.strip()
    if not q:
        raise validation_error("q", "must not be empty")
    if len(q) > QUERY_LENGTH:
        raise validation_error("q", f"must be at most {QUERY_LENGTH} characters")
    if "\x00" in q:
        # PostgreSQL text cannot hold NUL, so no message contains one; refuse rather than fail later.
        raise validation_error("q", "must not contain NUL characters")
    words = tuple(dict.fromkeys(norm(q).split()))
    if not words:
        raise validation_error("q", "must not be empty")
    before = None
    if request.before is not None:
        before = parse_id(request.before)
        if before is None:
            raise validation_error("before", "must be an id")
    return SearchQuery(words, before, request.limit)


async def search_page(conn: AsyncConnection, channel_id: int, viewer_id: int, query: SearchQuery
                      ) -> tuple[list[MessageRow], bool]:
    """(matching messages newest first, has_more); `private` messages only for their two parties."""
    rows = await dialect.search_messages(conn, channel_id, query.words, visible=queries.visible_to(viewer_id),
                                         before=query.before, limit=query.limit + 1)
    return cast("list[MessageRow]", rows[:query.limit]), len(rows) > query.limit


async def search_messages(rt: Runtime, principal: Principal, raw_channel_id: str, request: SearchRequest
                          ) -> dict[str, Any]:
    query = check_query(request)
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now, read_history=True)
        rows, more = await search_page(uow.conn, room.channel_id, principal.user_id, query)
        return {"messages": await hydrate(uow.conn, rows, principal.user_id, uow.now), "has_more": more}

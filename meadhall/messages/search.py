"""Message search, per room and server-wide (OpenAPI: searchMessages, searchGuildMessages;
docs/reference/limits.md, docs/search.md).

Every word of the query must occur in the message (AND); the last word matches as a prefix, the others as
whole words through the full-text index or as substrings through the substring path, and both results are
merged without duplicates. Since a whole word and a prefix are substrings as well, the merged result is
"every word occurs as a substring": that is what db/dialect/search.py computes, with the indexes of each database.
Matching is on `content_norm` (NFKC + casefold) with the query normalised the same way, so case does not
matter in any script. Words are data, never syntax: no LIKE wildcard or FTS operator in them has effect.

A server-wide search is the same statement over the rooms the caller may search (those where they hold
VIEW_CHANNEL and READ_MESSAGE_HISTORY after overrides): one `channel_id IN (...)` instead of one room, so each
database answers it from the same index as a room's search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.api.pagination import query_id
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError, validation_error
from meadhall.core.text import norm
from meadhall.db import dialect
from meadhall.guilds.access import GuildContext, access_guild, channel_permissions
from meadhall.guilds.rooms import queries as room_queries
from meadhall.messages import queries
from meadhall.messages.hydrate import hydrate
from meadhall.messages.rooms import MESSAGE_ROOM_TYPES, access_message_room
from meadhall.messages.rows import MessageRow
from meadhall.runtime import Runtime

P = perms.P
SEARCHABLE = P.VIEW_CHANNEL | P.READ_MESSAGE_HISTORY
QUERY_LENGTH = 200  # docs/reference/limits.md: `q` has 1-200 characters after trimming


@dataclass(frozen=True)
class SearchRequest:
    """The raw query parameters."""

    q: str
    before: str | None
    limit: int


@dataclass(frozen=True)
class GuildSearchRequest(SearchRequest):
    """The raw query parameters of a server-wide search: also the room and the author to keep to."""

    channel_id: str | None = None
    author_id: str | None = None


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
    return SearchQuery(words, query_id("before", request.before), request.limit)


async def search_page(conn: AsyncConnection, channel_id: int, viewer_id: int, query: SearchQuery
                      ) -> tuple[list[MessageRow], bool]:
    """(matching messages newest first, has_more); `private` messages only for their two parties."""
    rows = await dialect.select_messages_containing(conn, channel_id, query.words,
                                                    visible=queries.visible_to(viewer_id), before=query.before,
                                                    limit=query.limit + 1)
    return cast("list[MessageRow]", rows[:query.limit]), len(rows) > query.limit


async def search_room_messages(rt: Runtime, principal: Principal, raw_channel_id: str, request: SearchRequest
                              ) -> dict[str, Any]:
    query = check_query(request)
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now, read_history=True)
        rows, more = await search_page(uow.conn, room.channel_id, principal.user_id, query)
        return {"messages": await hydrate(uow.conn, rows, principal.user_id, uow.now), "has_more": more}


async def searchable_room_ids(conn: AsyncConnection, gc: GuildContext) -> list[int]:
    """The guild's rooms that carry messages (text rooms and the text of voice rooms) in which the caller holds
    VIEW_CHANNEL and READ_MESSAGE_HISTORY, overrides applied."""
    rows = await room_queries.select_channels(conn, gc.guild_id)
    overrides = await room_queries.select_guild_overrides(conn, gc.guild_id)
    return [int(r["id"]) for r in rows if r["type"] in MESSAGE_ROOM_TYPES
            and channel_permissions(gc, overrides.get(r["id"], [])) & SEARCHABLE == SEARCHABLE]


async def search_guild_messages(rt: Runtime, principal: Principal, raw_guild_id: str, request: GuildSearchRequest
                                ) -> dict[str, Any]:
    """Newest first across the rooms the caller may search; 404 `guild.not_found` for a non-member, 404
    `channel.not_found` for a `channel_id` that is not one of those rooms; an unknown author finds nothing."""
    query = check_query(request)
    channel_id = query_id("channel_id", request.channel_id)
    author_id = query_id("author_id", request.author_id)
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        rooms = await searchable_room_ids(uow.conn, gc)
        if channel_id is not None:
            if channel_id not in rooms:
                raise AppError("channel.not_found")
            rooms = [channel_id]
        if not rooms:
            return {"messages": [], "has_more": False}
        visible = queries.visible_to_from(principal.user_id, author_id)
        found = await dialect.select_messages_containing(uow.conn, rooms[0] if len(rooms) == 1 else rooms,
                                                         query.words, visible=visible, before=query.before,
                                                         limit=query.limit + 1)
        rows = cast("list[MessageRow]", found[:query.limit])
        return {"messages": await hydrate(uow.conn, rows, principal.user_id, uow.now),
                "has_more": len(found) > query.limit}

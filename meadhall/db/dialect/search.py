"""Substring search over message contents and account names, through the trigram index of each database.
The objects were created by migrations 0006, 0018 and 0019 (meadhall/db/migrations/frozen/); their names
below are the ones those revisions gave them."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import (
    BigInteger,
    Float,
    Integer,
    Select,
    String,
    Subquery,
    and_,
    bindparam,
    column,
    func,
    literal_column,
    or_,
    select,
    table,
    text,
)
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from meadhall.core.text import escape_like
from meadhall.db.dialect.connection import is_sqlite
from meadhall.db.schema import messages, users

# ---- message search (docs/architecture.md) -------------------------------------------------------------------
#
# The rule: every word of the query (normalised like content_norm: NFKC + casefold) occurs in the message's
# content_norm. The API describes two methods whose results are merged: whole words / the last word as a
# prefix through a full-text index, and substrings. A whole word and a prefix are substrings, so the
# merge is exactly the substring result; what each database needs is an index that finds substrings.
#
# SQLite: `messages_search`, an FTS5 table with the trigram tokenizer over content_norm (external
#   content: the text stays in `messages`, rowid = message id), kept current by three triggers. A quoted
#   FTS5 phrase is a literal substring of 3+ characters found through the index (a long word: the
#   trigrams that cover it, see _cover); shorter words, and long ones, are checked with instr() on
#   the rows the index (or the room's newest-first scan) yields. A later
#   migration that rebuilds `messages` in batch mode drops the triggers: it must create them again (the
#   statements of migrations/frozen/message_search_0006.py).
# PostgreSQL: pg_trgm, and a GIN trigram index on content_norm: `LIKE '%word%'` (escaped) for words of 3+
#   characters goes through it (a long word: one LIKE per trigram of its cover, see _cover); shorter words,
#   and long ones, are checked with strpos(), which the planner cannot send to the index (a pattern
#   without trigrams would make it read the whole index).
#
# A tsvector index for whole words and prefixes was built and measured (100,000 messages in one room): it
# never adds a result to the substring match, and its branch of the merge cost up to 95 ms when the planner
# misjudged a prefix (a backward scan of the whole room for 'xylophone':*), against under 1 ms for the
# trigram path; so PostgreSQL, like SQLite, answers from the trigram index alone.

SEARCH_FTS_TABLE = "messages_search"
SEARCH_TRIGRAM_INDEX = "ix_messages_content_norm_trgm"
_TRIGRAM = 3  # the shortest word a trigram index can look up


def is_search_object(type_: str, name: str | None) -> bool:
    """True for the search objects that db/schema does not describe (raw SQL, different per database):
    the FTS5 table with its shadow tables, and the trigram index."""
    if not name:
        return False
    if type_ == "table":
        return name == USER_GRAMS_TABLE or any(name == t or name.startswith(t + "_")
                                               for t in (SEARCH_FTS_TABLE, USER_FTS_TABLE))
    return type_ == "index" and (name == SEARCH_TRIGRAM_INDEX or name in USER_SEARCH_INDEXES)


async def select_messages_containing(conn: AsyncConnection, channel_id: int | Sequence[int], words: Sequence[str],
                                     *, visible: ColumnElement[bool], before: int | None, limit: int
                                     ) -> list[Mapping[Any, Any]]:
    """Messages of the room (or of any of the rooms, for a server-wide search) whose content_norm contains
    every word (already normalised), that pass `visible`, older than `before`; newest first, at most `limit`.
    One statement (with SET LOCAL before it on PostgreSQL), but up to three for one room on PostgreSQL
    (_postgres_room_search)."""
    if not words:
        return []
    in_rooms = (messages.c.channel_id == channel_id if isinstance(channel_id, int)
                else messages.c.channel_id.in_(list(channel_id)))
    base: list[ColumnElement[bool]] = [in_rooms, visible]
    if is_sqlite(conn):
        stmt = _sqlite_search(words, base, before, limit)
    else:
        # The best plan depends on the words (a rare trigram: the index; a common one: the room's newest
        # rows), so plan with the values every time, never with a cached generic plan.
        await plan_with_values(conn)
        if isinstance(channel_id, int):
            return await _postgres_room_search(conn, channel_id, words, visible, before, limit)
        stmt = _postgres_search(words, base, before, limit)
    return list((await conn.execute(stmt)).mappings())


def _fts5_phrase(word: str) -> str:
    # Inside a double-quoted FTS5 string every character is literal text; a quote is written twice.
    return '"' + word.replace('"', '""') + '"'


# A word of this many characters or more is looked up by a cover of its trigrams (_cover) rather than
# by all of them.
_COVER_FROM = 9


def _cover(word: str) -> list[str]:
    """The parts an index looks `word` (3+ characters) up by: the word itself, or for a long word the
    trigrams that cover it end to end without overlapping (`rygristryng`: ryg, ris, try, yng), the row then
    checked for the whole word.

    Why: both indexes read the entries of every trigram of what they are given (FTS5 the doclist of each
    term of a phrase, pg_trgm's GIN the posting list of each trigram of a LIKE pattern); a rare long word made
    of common trigrams (most words of a large room are) costs the sum of nine or more long lists. Its cover
    is a third of them, and a cover of four or more trigrams is rare enough that few rows need the check
    (docs/search.md, "Cost": a room of 1,000,000 messages, SQLite 34-47 ms -> 2-18 ms, PostgreSQL 13-27 ms ->
    5-7 ms for such words). A short word keeps all its trigrams: two without their positions would let
    through many rows to check."""
    if len(word) < _COVER_FROM:
        return [word]
    grams = [word[i:i + _TRIGRAM] for i in range(0, len(word) - _TRIGRAM + 1, _TRIGRAM)]
    if len(word) % _TRIGRAM:
        grams.append(word[-_TRIGRAM:])
    return list(dict.fromkeys(grams))


def _sqlite_search(words: Sequence[str], base: list[ColumnElement[bool]], before: int | None, limit: int) -> Select:
    indexed = [w for w in words if len(w) >= _TRIGRAM]
    # instr() compares exactly: no wildcard characters to escape. It checks the short words, which no
    # trigram finds, and the long ones, which their cover only narrows down.
    short = [func.instr(messages.c.content_norm, w) > 0 for w in words
             if len(w) < _TRIGRAM or len(w) >= _COVER_FROM]
    if not indexed:
        stmt = select(messages).where(*base, *short)
        if before is not None:
            stmt = stmt.where(messages.c.id < before)
        return stmt.order_by(messages.c.id.desc()).limit(limit)
    fts = table(SEARCH_FTS_TABLE, column("rowid", BigInteger))
    match = literal_column(SEARCH_FTS_TABLE).op("MATCH")(" AND ".join(_fts5_phrase(part) for w in indexed
                                                                      for part in _cover(w)))
    # FTS5 yields its matches newest first (ORDER BY rowid DESC) and the join checks the room and the
    # other conditions, so the walk stops after `limit` hits.
    stmt = select(messages).select_from(fts.join(messages, messages.c.id == fts.c.rowid)).where(match, *base, *short)
    if before is not None:
        stmt = stmt.where(fts.c.rowid < before)
    return stmt.order_by(fts.c.rowid.desc()).limit(limit)


def _postgres_search(words: Sequence[str], base: list[ColumnElement[bool]], before: int | None,
                     limit: int) -> Select:
    content = messages.c.content_norm
    # strpos() compares exactly: it checks the short words, which no trigram finds, and the long ones,
    # which their cover only narrows down.
    conditions: list[ColumnElement[bool]] = [content.like("%" + escape_like(part) + "%", escape="\\")
                  for w in words if len(w) >= _TRIGRAM for part in _cover(w)]
    conditions += [func.strpos(content, w) > 0 for w in words if len(w) < _TRIGRAM or len(w) >= _COVER_FROM]
    stmt = select(messages).where(*base, *conditions)
    if before is not None:
        stmt = stmt.where(messages.c.id < before)
    return stmt.order_by(messages.c.id.desc()).limit(limit)


# ---- PostgreSQL, one room: how common are the words? -----------------------------------------------------------
#
# Left to itself, the planner chooses between the room's newest-first walk and the trigram index from its
# estimate of the pattern's frequency, which pg_trgm does not give: it takes the index for words in
# 0.1-1 % of a large room's messages, and the index yields every match of the room to be sorted before the
# first 25 come out (`koub`, 4,885 matches in 1,000,000 messages: 60-170 ms), where the walk would have
# found 25 in a few thousand rows. So a room's search first reads the room's PROBE newest messages (below
# `before`), which also answers a common word outright; the matches it found there estimate the rows a
# walk would read to fill the page, and the matches the index would yield. A walk estimated under
# WALK_AT_MOST rows, and cheaper than the index, reads on below the probe, in a window of at most
# WALK_AT_MOST rows; what is still missing (no match in the probe, too few, or a walk that
# ran out) is left to the planner below the last row read, as before. Each statement starts where the
# previous one stopped: nothing is read twice, and the page is the same as one statement's
# (docs/search.md, "Cost"). A server-wide search over several rooms keeps the one statement: the newest
# messages of several rooms come from no index in order.

PROBE = 2_000
WALK_AT_MOST = 20_000
# A row walked costs about a fifteenth of a match the trigram index yields (measured on 1,000,000 messages:
# 0.8 µs against 12 µs); the index yields the matches of every room (the table's), the walk only this room's.
WALK_ROW_COST = 1 / 15
_MESSAGE_COLUMNS = tuple(messages.c.keys())
# The planner's count of all messages (-1 before the table was first analysed).
_TABLE_ROWS = literal_column("(SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass)", Float)


async def _postgres_room_search(conn: AsyncConnection, room: int, words: Sequence[str],
                                visible: ColumnElement[bool], before: int | None, limit: int
                                ) -> list[Mapping[Any, Any]]:
    found, floor, table_rows = await _walk(conn, room, words, visible, before, PROBE, limit)
    if floor is None or len(found) == limit:
        return found
    if found:
        # The rows a walk would read to find the rest at the probe's rate of matches, against the matches
        # the index would yield at that rate over the whole table.
        rows = (limit - len(found)) * PROBE // len(found)
        indexed = table_rows * len(found) / PROBE
        if rows <= WALK_AT_MOST and (table_rows < 0 or rows * WALK_ROW_COST <= indexed):
            more, floor, _ = await _walk(conn, room, words, visible, floor, WALK_AT_MOST, limit - len(found))
            found += more
            if floor is None or len(found) == limit:
                return found
    stmt = _postgres_search(words, [messages.c.channel_id == room, visible], floor, limit - len(found))
    return found + list((await conn.execute(stmt)).mappings())


async def _walk(conn: AsyncConnection, room: int, words: Sequence[str], visible: ColumnElement[bool],
                before: int | None, rows: int, limit: int
                ) -> tuple[list[Mapping[Any, Any]], int | None, float]:
    """The matches among the room's `rows` newest messages older than `before` (newest first, at most
    `limit`), the id of the oldest of those `rows` messages when the walk read all of them and the room has
    more (None: the matches are complete, either `limit` of them or the room's end), and the planner's
    count of all messages (_TABLE_ROWS).

    One statement that stops at the `limit`-th match: the window's ids are numbered (on the ids alone: a
    window function over whole rows costs more than the walk), and only the matches and the window's last
    row are joined back to their messages."""
    numbered = _numbered_window(len(words), before is not None)
    last = numbered.c.seen == bindparam("rows")
    stmt = (select(messages, and_(numbered.c.hit, visible).label("found"), last.label("last"),
                   _TABLE_ROWS.label("table_rows"))
            .join_from(numbered, messages, messages.c.id == numbered.c.id)
            # The first condition holds on the numbered ids alone: the rows it leaves out are never joined.
            .where(or_(numbered.c.hit, last), or_(and_(numbered.c.hit, visible), last))
            .order_by(numbered.c.id.desc()).limit(bindparam("limit")))
    values: dict[str, Any] = {f"word_{i}": w for i, w in enumerate(words)}
    values.update(room=room, below=before, rows=rows, limit=limit)
    found: list[Mapping[Any, Any]] = []
    floor: int | None = None
    table_rows = -1.0
    for r in (await conn.execute(stmt, values)).mappings():
        if r["found"]:
            found.append({name: r[name] for name in _MESSAGE_COLUMNS})
        if r["last"]:
            floor, table_rows = r["id"], float(r["table_rows"])
    return found, (None if len(found) == limit else floor), table_rows


@functools.cache
def _numbered_window(words: int, below: bool) -> Subquery:
    """The room's newest messages (older than `below`), at most `rows`, newest first: their id, whether they
    hold every word (strpos(), which no index serves: the walk stays a walk) and their rank. Built once per
    shape: a subquery costs more to build than the walk of a common word."""
    recent = messages.alias("recent")
    hit = and_(*[func.strpos(recent.c.content_norm, bindparam(f"word_{i}", type_=String)) > 0
                 for i in range(words)])
    window = select(recent.c.id, hit.label("hit")).where(recent.c.channel_id == bindparam("room", type_=BigInteger))
    if below:
        window = window.where(recent.c.id < bindparam("below", type_=BigInteger))
    ordered = window.order_by(recent.c.id.desc()).limit(bindparam("rows", type_=Integer)).subquery("window")
    return select(ordered.c.id, ordered.c.hit, func.row_number().over(order_by=ordered.c.id.desc()).label("seen")
                  ).subquery("numbered")


# ---- user search (instance administration's user list) ----------------------------------------
#
# A part of a username or display name, any case: the same substring machinery as message search. SQLite:
# `users_search`, an FTS5 trigram table over users.username_norm and display_name_norm (external content,
# rowid = user id) kept by triggers, which fire only when a name changes (never on the activity updates).
# PostgreSQL: a GIN trigram index on each column, which `LIKE '%q%'` uses. A part shorter than a trigram
# is a scan on both. A later migration that rebuilds `users` in batch mode must create them again
# (migrations/frozen/user_search_0018.py).
#
# Migration 0019, for those short parts:
# - USER_LIST_INDEX: the id and the columns the list filters on, a seventh of the table's size; the scan
#   reads it instead of the rows. Id first, so that walking it backwards yields the newest matches first and the
#   page of a common part stops early.
# - USER_GRAMS_TABLE: for every string of one or two characters, how many accounts have it in their
#   username_norm or display_name_norm; kept by triggers on `users` (an insert, a delete, a change of
#   either name), like the FTS table. The `total` of a short part alone is one row of it instead of a
#   count over every account, and a part no account has needs no scan at all. A row whose count fell to
#   0 stays (a string someone had once). A later migration that rebuilds `users` in batch mode drops the
#   triggers: it must create them again (migrations/frozen/user_grams_0019.py, which also counts every
#   account afresh).

USER_FTS_TABLE = "users_search"
USER_TRIGRAM_INDEXES = ("ix_users_username_norm_trgm", "ix_users_display_name_norm_trgm")
USER_LIST_INDEX = "ix_users_list"
USER_SEARCH_INDEXES = (*USER_TRIGRAM_INDEXES, USER_LIST_INDEX)
USER_GRAMS_TABLE = "user_name_grams"


async def count_users_with_short_part(conn: AsyncConnection, part: str) -> int | None:
    """How many accounts have `part` (already normalised) in either name, from USER_GRAMS_TABLE, when the
    part is one or two characters long; None for any other part (the trigram index counts those)."""
    if not 0 < len(part) < _TRIGRAM:
        return None
    grams = table(USER_GRAMS_TABLE, column("gram", String), column("users", Integer))
    found = (await conn.execute(select(grams.c.users).where(grams.c.gram == part))).scalar_one_or_none()
    return int(found or 0)


async def plan_with_values(conn: AsyncConnection) -> None:
    """PostgreSQL plans the rest of this transaction's statements with their values, never with a cached
    generic plan: for a LIKE pattern the value decides between a trigram index and a scan (a generic plan
    that reads a trigram index with a pattern of under three characters reads all of it)."""
    if not is_sqlite(conn):
        await conn.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))


def user_name_contains(conn: AsyncConnection, part: str) -> ColumnElement[bool]:
    """Users whose username_norm or display_name_norm contains `part` (already normalised), literally."""
    if len(part) >= _TRIGRAM and is_sqlite(conn):
        fts = table(USER_FTS_TABLE, column("rowid", BigInteger))
        match = literal_column(USER_FTS_TABLE).op("MATCH")(_fts5_phrase(part))
        return users.c.id.in_(select(fts.c.rowid).where(match))
    pattern = "%" + escape_like(part) + "%"
    return or_(users.c.username_norm.like(pattern, escape="\\"), users.c.display_name_norm.like(pattern, escape="\\"))

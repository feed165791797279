"""SQL for messages and reactions, always scoped by room. Returns typed rows (messages/rows.py: row
mappings cast to TypedDicts, no copy); never commits."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import and_, bindparam, case, delete, func, insert, literal, or_, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import BindParameter, ColumnElement

from meadhall.accounts.queries import UserRow
from meadhall.db import dialect
from meadhall.db.schema import channels, messages, reactions, read_states, users
from meadhall.db.schema.messages import everyone_mentions, message_nonces, user_mentions
from meadhall.messages.rows import MessageFields, MessageRow, ReactionCountRow, ReadStateRow


def visible_to(viewer_id: int | BindParameter[Any]) -> ColumnElement[bool]:
    """`private` messages exist only for their author and recipient."""
    return or_(messages.c.kind != "private", messages.c.author_id == viewer_id, messages.c.recipient_id == viewer_id)


def visible_to_from(viewer_id: int, author_id: int | None) -> ColumnElement[bool]:
    """`visible_to`, narrowed to one author's messages when `author_id` is given (guild search's filter)."""
    visible = visible_to(viewer_id)
    return visible if author_id is None else and_(visible, messages.c.author_id == author_id)


# The statements of the send and history paths are built once: constructing a statement costs several
# times running it on SQLite.
_INSERT = insert(messages)
_INSERT_NAMED = insert(user_mentions)
_INSERT_EVERYONE = insert(everyone_mentions)
_GET = select(messages).where(messages.c.channel_id == bindparam("channel_id"), messages.c.id == bindparam("id"))
_BY_IDS = select(messages).where(messages.c.channel_id == bindparam("channel_id"),
                                 messages.c.id.in_(bindparam("ids", expanding=True)))
_SET_LAST = update(channels).where(channels.c.id == bindparam("channel_id")).values(
    last_message_id=bindparam("message_id"))
_USERS = select(users).where(users.c.id.in_(bindparam("ids", expanding=True)))
_USER = select(users).where(users.c.id == bindparam("id"))
# A page selects what a Message object shows: not `content_norm` (the search copy of the content).
_SHOWN = [c for c in messages.c if c.name != "content_norm"]
_PAGE_BASE = select(*_SHOWN).where(messages.c.channel_id == bindparam("channel_id"),
                                    visible_to(bindparam("viewer_id"))).limit(bindparam("limit"))
_PAGES = {
    "newest": _PAGE_BASE.order_by(messages.c.id.desc()),
    "before": _PAGE_BASE.where(messages.c.id < bindparam("cursor")).order_by(messages.c.id.desc()),
    "after": _PAGE_BASE.where(messages.c.id > bindparam("cursor")).order_by(messages.c.id.asc()),
}


async def insert_message(conn: AsyncConnection, row: MessageRow) -> None:
    """The message and its mentions, in the caller's transaction: every way a message is written (send,
    webhook, system message) keeps the mention tables that acknowledgements count."""
    await conn.execute(_INSERT, row)
    named, everyone = mention_rows(row)
    if named:
        await conn.execute(_INSERT_NAMED, named)
    if everyone is not None:
        await conn.execute(_INSERT_EVERYONE, everyone)


def mention_rows(row: MessageFields) -> tuple[list[dict[str, int]], dict[str, Any] | None]:
    """(user_mentions rows, everyone_mentions row) of a message: whom it counts as mentioning after their read
    mark (OpenAPI: listReadStates). A private message names only its recipient (others named in it cannot
    see it); an `@everyone` message is one row for the whole room; the author and system messages never."""
    if row["kind"] == "system":
        return [], None
    message = {"channel_id": row["channel_id"], "message_id": row["id"]}
    if row["kind"] == "private":
        named = [int(row["recipient_id"])] if row["recipient_id"] is not None else []
    elif row["mention_everyone"]:
        return [], {**message, "author_id": row["author_id"]}
    else:
        named = [int(m) for m in row["mentions"] or ()]
    return [{**message, "user_id": u} for u in dict.fromkeys(named) if u != row["author_id"]], None


# The mentions of a user in a room with ids in (after, through], each kind at most `cap`: two ranges of the
# mention tables' primary keys, whatever the number of messages in the room.
_NAMED_MENTIONS = select(literal(1)).select_from(user_mentions).where(
    user_mentions.c.user_id == bindparam("user_id"), user_mentions.c.channel_id == bindparam("channel_id"),
    user_mentions.c.message_id > bindparam("after"), user_mentions.c.message_id <= bindparam("through"),
).limit(bindparam("cap")).subquery()
_EVERYONE_MENTIONS = select(literal(1)).select_from(everyone_mentions).where(
    everyone_mentions.c.channel_id == bindparam("channel_id"),
    everyone_mentions.c.message_id > bindparam("after"), everyone_mentions.c.message_id <= bindparam("through"),
    or_(everyone_mentions.c.author_id.is_(None), everyone_mentions.c.author_id != bindparam("user_id")),
).limit(bindparam("cap")).subquery()
_MENTION_COUNT = select(select(func.count()).select_from(_NAMED_MENTIONS).scalar_subquery()
                        + select(func.count()).select_from(_EVERYONE_MENTIONS).scalar_subquery())
_NO_UPPER_BOUND = 2**63 - 1


async def select_mention_count(conn: AsyncConnection, user_id: int, channel_id: int, after: int | None,
                               through: int | None, cap: int) -> int:
    """Mentions of the user in the room after message `after` up to `through` (None: no bound), at most `cap`."""
    params = {"user_id": user_id, "channel_id": channel_id, "after": 0 if after is None else after,
              "through": _NO_UPPER_BOUND if through is None else through, "cap": cap}
    return min(int((await conn.execute(_MENTION_COUNT, params)).scalar_one()), cap)


async def select_message(conn: AsyncConnection, channel_id: int, message_id: int) -> MessageRow | None:
    row = (await conn.execute(_GET, {"channel_id": channel_id, "id": message_id})).mappings().first()
    return cast("MessageRow | None", row)


async def select_messages_by_ids(conn: AsyncConnection, channel_id: int, ids: Iterable[int]
                                 ) -> dict[int, MessageRow]:
    wanted = list(set(ids))
    if not wanted:
        return {}
    rows = await conn.execute(_BY_IDS, {"channel_id": channel_id, "ids": wanted})
    return cast("dict[int, MessageRow]", {r["id"]: r for r in rows.mappings()})


async def select_messages_in_rooms(conn: AsyncConnection, pairs: Iterable[tuple[int, int]]) -> dict[int, MessageRow]:
    """message id -> row for (channel id, message id) pairs of several rooms in one statement (the last
    messages of a conversation list and what they reply to)."""
    wanted = set(pairs)
    if not wanted:
        return {}
    # Pairs, not two IN lists: with two lists the (channel_id, id) index is probed for every combination
    # (300 conversations: 90,000 probes, 10 ms on SQLite).
    stmt = select(*_SHOWN).where(tuple_(messages.c.channel_id, messages.c.id).in_(sorted(wanted)))
    rows = [cast(MessageRow, r) for r in (await conn.execute(stmt)).mappings()]
    return {r["id"]: r for r in rows}


async def select_page(conn: AsyncConnection, channel_id: int, viewer_id: int, *, before: int | None,
                      after: int | None, limit: int) -> tuple[list[MessageFields], bool]:
    """(messages newest first, has_more). With `after`: the `limit` messages right after the cursor,
    still returned newest first (OpenAPI: listMessages)."""
    kind = "after" if after is not None else "before" if before is not None else "newest"
    params = {"channel_id": channel_id, "viewer_id": viewer_id, "limit": limit + 1,
              "cursor": after if after is not None else before}
    rows = cast("list[MessageFields]", (await conn.execute(_PAGES[kind], params)).mappings().all())
    more = len(rows) > limit
    rows = rows[:limit]
    if after is not None:
        rows.reverse()
    return rows, more


async def update_message(conn: AsyncConnection, channel_id: int, message_id: int, values: dict[str, Any]) -> None:
    await conn.execute(
        update(messages).where(messages.c.channel_id == channel_id, messages.c.id == message_id).values(values)
    )


async def delete_message(conn: AsyncConnection, channel_id: int, message_id: int) -> None:
    await conn.execute(delete(messages).where(messages.c.channel_id == channel_id, messages.c.id == message_id))


async def select_author_messages_since(conn: AsyncConnection, channel_ids: list[int], author_id: int, since: datetime,
                                       first_id: int) -> list[MessageRow]:
    """The author's messages in these rooms written at `since` or later, oldest first. `first_id` (the smallest
    id made at `since`) keeps the walk to a range of the (channel_id, id) index: no index knows authors."""
    if not channel_ids:
        return []
    stmt = select(messages).where(messages.c.channel_id.in_(channel_ids), messages.c.id >= first_id,
                                  messages.c.author_id == author_id, messages.c.created_at >= since,
                                  messages.c.kind != "system").order_by(messages.c.id)
    return cast("list[MessageRow]", list((await conn.execute(stmt)).mappings()))


async def delete_messages(conn: AsyncConnection, channel_id: int, message_ids: list[int]) -> None:
    await conn.execute(delete(messages).where(messages.c.channel_id == channel_id, messages.c.id.in_(message_ids)))


async def update_last_message_id(conn: AsyncConnection, channel_id: int, message_id: int | None) -> None:
    await conn.execute(_SET_LAST, {"channel_id": channel_id, "message_id": message_id})


async def select_newest_public_id(conn: AsyncConnection, channel_id: int) -> int | None:
    stmt = select(func.max(messages.c.id)).where(messages.c.channel_id == channel_id, messages.c.kind != "private")
    return (await conn.execute(stmt)).scalar()


async def select_authors(conn: AsyncConnection, ids: Iterable[int]) -> dict[int, UserRow]:
    """Account rows of the authors of a page or a send, built for that hot path (accounts.queries has the
    general select_users_by_ids)."""
    wanted = list(set(ids))
    if not wanted:
        return {}
    if len(wanted) == 1:
        # A send's author, or a page by one author: a plain statement, without expanding an IN list.
        row = (await conn.execute(_USER, {"id": wanted[0]})).mappings().first()
        return {} if row is None else {row["id"]: cast(UserRow, row)}
    return {r["id"]: cast(UserRow, r) for r in (await conn.execute(_USERS, {"ids": wanted})).mappings()}


async def select_existing_user_ids(conn: AsyncConnection, ids: list[int]) -> list[int]:
    if not ids:
        return []
    found = set((await conn.execute(
        select(users.c.id).where(users.c.id.in_(ids), users.c.deleted_at.is_(None))
    )).scalars())
    return [i for i in ids if i in found]


async def select_guild_channel_ids(conn: AsyncConnection, guild_id: int, ids: list[int]) -> list[int]:
    if not ids:
        return []
    found = set((await conn.execute(
        select(channels.c.id).where(channels.c.guild_id == guild_id, channels.c.id.in_(ids))
    )).scalars())
    return [i for i in ids if i in found]


_REACTIONS = (
    select(reactions.c.message_id, reactions.c.emoji, func.count().label("count"),
           func.min(reactions.c.created_at).label("first"),
           func.max(case((reactions.c.user_id == bindparam("user_id"), 1), else_=0)).label("me"))
    .where(reactions.c.message_id.in_(bindparam("ids", expanding=True)))
    .group_by(reactions.c.message_id, reactions.c.emoji)
    .order_by(reactions.c.message_id, "first", reactions.c.emoji)
)


async def select_reactions(conn: AsyncConnection, message_ids: list[int], user_id: int) -> list[ReactionCountRow]:
    """Aggregates per (message, emoji) in order of first use, with `me`: 1 when `user_id` reacted so."""
    if not message_ids:
        return []
    rows = (await conn.execute(_REACTIONS, {"ids": message_ids, "user_id": user_id})).mappings().all()
    return cast("list[ReactionCountRow]", rows)


async def select_reaction_pairs(conn: AsyncConnection, message_id: int) -> list[tuple[int, str]]:
    """(user id, emoji) of every reaction on one message."""
    rows = await conn.execute(select(reactions.c.user_id, reactions.c.emoji).where(reactions.c.message_id == message_id))
    return [(u, e) for u, e in rows.all()]


# ---- reactions and pins --------------------------------------------------------------------------


async def lock_message(conn: AsyncConnection, channel_id: int, message_id: int) -> None:
    """Serialise count-limited writes on one message (no-op on SQLite, whose writers are serial)."""
    await conn.execute(select(messages.c.id).where(messages.c.channel_id == channel_id,
                                                    messages.c.id == message_id).with_for_update())


async def lock_channel(conn: AsyncConnection, channel_id: int) -> None:
    """The room row, taken before any of its message rows by every writer that takes both: message writes
    update the room row through triggers (migration 0010), and one order rules out deadlocks."""
    await conn.execute(select(channels.c.id).where(channels.c.id == channel_id).with_for_update())


async def select_message_emojis(conn: AsyncConnection, message_id: int) -> set[str]:
    stmt = select(reactions.c.emoji).where(reactions.c.message_id == message_id).distinct()
    return set((await conn.execute(stmt)).scalars())


async def select_custom_reaction_key(conn: AsyncConnection, message_id: int, emoji_id: int) -> str | None:
    """The stored `<:name:id>` key of a custom emoji on this message, whatever name it was stored with."""
    stmt = select(reactions.c.emoji).where(reactions.c.message_id == message_id,
                                           reactions.c.emoji.like(f"<:%:{emoji_id}>")).limit(1)
    return (await conn.execute(stmt)).scalar()


async def insert_reaction(conn: AsyncConnection, message_id: int, emoji: str, user_id: int, now: datetime) -> bool:
    """True when the reaction is new (an existing one is left alone)."""
    row = {"message_id": message_id, "emoji": emoji, "user_id": user_id, "created_at": now}
    result = await conn.execute(dialect.insert_ignore(conn, reactions, row))
    return bool(result.rowcount)


async def delete_reaction(conn: AsyncConnection, message_id: int, emoji: str, user_id: int) -> bool:
    result = await conn.execute(delete(reactions).where(
        reactions.c.message_id == message_id, reactions.c.emoji == emoji, reactions.c.user_id == user_id))
    return bool(result.rowcount)


async def select_reactors(conn: AsyncConnection, message_id: int, emoji: str, *, after: int | None, limit: int
                   ) -> tuple[list[UserRow], bool]:
    """Users who reacted with `emoji`, by user id ascending; (page, has_more)."""
    stmt = (select(users).join(reactions, reactions.c.user_id == users.c.id)
            .where(reactions.c.message_id == message_id, reactions.c.emoji == emoji))
    if after is not None:
        stmt = stmt.where(users.c.id > after)
    rows = [cast(UserRow, r) for r in (await conn.execute(stmt.order_by(users.c.id).limit(limit + 1))).mappings()]
    return rows[:limit], len(rows) > limit


async def select_pinned_messages(conn: AsyncConnection, channel_id: int, viewer_id: int) -> list[MessageRow]:
    """Pinned messages of the room the viewer may see, most recently pinned first."""
    stmt = (select(messages)
            .where(messages.c.channel_id == channel_id, messages.c.pinned.is_(True), visible_to(viewer_id))
            .order_by(messages.c.pinned_at.desc(), messages.c.id.desc()))
    return cast("list[MessageRow]", (await conn.execute(stmt)).mappings().all())


async def select_pin_count(conn: AsyncConnection, channel_id: int) -> int:
    stmt = select(func.count()).select_from(messages).where(messages.c.channel_id == channel_id,
                                                            messages.c.pinned.is_(True))
    return int((await conn.execute(stmt)).scalar_one())


async def select_last_pin_at(conn: AsyncConnection, channel_id: int) -> datetime | None:
    stmt = select(func.max(messages.c.pinned_at)).where(messages.c.channel_id == channel_id,
                                                        messages.c.pinned.is_(True))
    return (await conn.execute(stmt)).scalar()


# Built once (READY runs it): building it per call cost more than running it.
_READ_STATES = (select(read_states).where(read_states.c.user_id == bindparam("user_id"))
                .order_by(read_states.c.channel_id))


async def select_read_states(conn: AsyncConnection, user_id: int) -> list[ReadStateRow]:
    return cast("list[ReadStateRow]", (await conn.execute(_READ_STATES, {"user_id": user_id})).mappings().all())


async def select_read_state_user_ids(conn: AsyncConnection, channel_id: int, user_ids: list[int]) -> set[int]:
    """Those of the users who have a read state in the room."""
    stmt = select(read_states.c.user_id).where(read_states.c.channel_id == channel_id,
                                               read_states.c.user_id.in_(user_ids))
    return set((await conn.execute(stmt)).scalars())


async def update_mention_counts_up(conn: AsyncConnection, channel_id: int, user_ids: list[int], cap: int,
                                   now: datetime) -> None:
    """+1 mention for each of the users' read states in the room, stopping at `cap`."""
    await conn.execute(
        update(read_states)
        .where(read_states.c.channel_id == channel_id, read_states.c.user_id.in_(user_ids))
        .values(mention_count=case((read_states.c.mention_count < cap,
                                    read_states.c.mention_count + 1), else_=read_states.c.mention_count),
                updated_at=now)
    )


async def insert_read_state_once(conn: AsyncConnection, row: ReadStateRow) -> None:
    """The read state, unless the user has one in the room already."""
    await conn.execute(dialect.insert_ignore(conn, read_states, dict(row)))


@dataclass(frozen=True)
class MentionedUsers:
    """Whose mention counts a deleted message lowers: the listed users, or everyone but its author."""

    user_ids: list[int] | None = None
    all_but: int | None = None


async def update_mention_counts_down(conn: AsyncConnection, channel_id: int, message_id: int, who: MentionedUsers,
                                     cap: int) -> None:
    """-1 mention for those of `who` who have not read past the message; a count at `cap` stays."""
    chosen = (read_states.c.user_id.in_(who.user_ids or []) if who.all_but is None
              else read_states.c.user_id != who.all_but)
    await conn.execute(
        update(read_states)
        .where(read_states.c.channel_id == channel_id, chosen, read_states.c.mention_count > 0,
               read_states.c.mention_count < cap,
               (read_states.c.last_read_message_id.is_(None)) | (read_states.c.last_read_message_id < message_id))
        .values(mention_count=read_states.c.mention_count - 1)
    )


async def select_newest_message_id(conn: AsyncConnection, channel_id: int) -> int | None:
    """The room's newest message id, whoever may see it."""
    stmt = select(func.max(messages.c.id)).where(messages.c.channel_id == channel_id)
    value: int | None = (await conn.execute(stmt)).scalar_one_or_none()
    return value


async def upsert_read_state(conn: AsyncConnection, row: ReadStateRow) -> None:
    await conn.execute(dialect.upsert(conn, read_states, dict(row), ["user_id", "channel_id"],
                                      ["last_read_message_id", "mention_count", "updated_at"]))


# ---- nonces (messages/nonces.py) --------------------------------------------------------------------------------

_NONCE_KEY = (message_nonces.c.channel_id == bindparam("k_channel"),
              message_nonces.c.author_id == bindparam("k_author"), message_nonces.c.nonce == bindparam("k_nonce"))
_NONCE_COLUMNS = ("channel_id", "author_id", "nonce", "message_id", "created_at")
_NONCE_INSERTS: dict[str, Any] = {}  # one statement per dialect, built on first use
_NONCE_GET = select(message_nonces.c.message_id, message_nonces.c.created_at).where(*_NONCE_KEY)
_NONCE_TAKE_OVER = update(message_nonces).where(
    *_NONCE_KEY, message_nonces.c.message_id == bindparam("seen_id")).values(
    message_id=bindparam("new_id"), created_at=bindparam("now"))
# SKIP LOCKED: two nodes sweeping at once each delete what the other has not locked, never waiting on each other
# (PostgreSQL; SQLite's compiler leaves the clause out, and its writers take turns anyway).
_NONCE_ROW = tuple_(message_nonces.c.channel_id, message_nonces.c.author_id, message_nonces.c.nonce)
_NONCE_SWEEP = delete(message_nonces).where(_NONCE_ROW.in_(
    select(message_nonces.c.channel_id, message_nonces.c.author_id, message_nonces.c.nonce)
    .where(message_nonces.c.created_at < bindparam("before")).with_for_update(skip_locked=True)))


async def insert_nonce(conn: AsyncConnection, channel_id: int, author_id: int, nonce: str, message_id: int,
                       now: datetime) -> bool:
    """False when the key exists (whatever its age): the caller reads it. On PostgreSQL a key written by a
    transaction still open makes this wait for its end, so two concurrent sends never both get True."""
    stmt = _NONCE_INSERTS.get(conn.dialect.name)
    if stmt is None:
        stmt = _NONCE_INSERTS[conn.dialect.name] = dialect.insert_ignore(
            conn, message_nonces, {c: bindparam(c) for c in _NONCE_COLUMNS})
    result = await conn.execute(stmt, {"channel_id": channel_id, "author_id": author_id, "nonce": nonce,
                                       "message_id": message_id, "created_at": now})
    return bool(result.rowcount)


async def select_nonce(conn: AsyncConnection, channel_id: int, author_id: int, nonce: str
                       ) -> tuple[int, datetime] | None:
    """(message_id, created_at) of the key."""
    row = (await conn.execute(_NONCE_GET, {"k_channel": channel_id, "k_author": author_id, "k_nonce": nonce})).first()
    return None if row is None else (int(row.message_id), row.created_at)


async def update_nonce_taken_over(conn: AsyncConnection, channel_id: int, author_id: int, nonce: str, seen_id: int,
                                  new_id: int, now: datetime) -> bool:
    """Point the key at a new message if it still names `seen_id` (compare and set: of two sends taking over one
    expired key, one wins; on PostgreSQL the other waits for it and then finds the key changed)."""
    result = await conn.execute(_NONCE_TAKE_OVER, {"k_channel": channel_id, "k_author": author_id, "k_nonce": nonce,
                                                   "seen_id": seen_id, "new_id": new_id, "now": now})
    return bool(result.rowcount)


async def delete_nonces_before(conn: AsyncConnection, before: datetime) -> int:
    return int((await conn.execute(_NONCE_SWEEP, {"before": before})).rowcount or 0)

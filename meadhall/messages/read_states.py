"""Read states (OpenAPI: listReadStates): a row per user and room once the user acknowledged it or was mentioned
there. `mention_count` counts mentions after the last read message; acknowledging resets it.

Counts stop at MENTION_COUNT_MAX (clients show "99+" above 99), so no count ever scans for more than that
many matches, and the count of an acknowledgement is taken in a read transaction before the short write
that stores it (on SQLite a write transaction holds the database's single write lock)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import RowMapping, and_, case, func, literal, select, update

from meadhall.core.clock import iso
from meadhall.core.limits import MENTION_COUNT_MAX
from meadhall.db import dialect
from meadhall.db.schema import messages, read_states
from meadhall.db.uow import UnitOfWork


def read_state_view(row: RowMapping | dict[str, Any]) -> dict[str, Any]:
    last = row["last_read_message_id"]
    return {
        "channel_id": str(row["channel_id"]),
        "last_read_message_id": None if last is None else str(last),
        "mention_count": int(row["mention_count"]),
        "updated_at": iso(row["updated_at"]),
    }


async def bump_mentions(uow: UnitOfWork, channel_id: int, user_ids: list[int]) -> None:
    """+1 mention for each user (creating their row when missing)."""
    if not user_ids:
        return
    conn = uow.conn
    existing = set((await conn.execute(
        select(read_states.c.user_id).where(read_states.c.channel_id == channel_id,
                                            read_states.c.user_id.in_(user_ids))
    )).scalars())
    if existing:
        await conn.execute(
            update(read_states)
            .where(read_states.c.channel_id == channel_id, read_states.c.user_id.in_(list(existing)))
            .values(mention_count=case((read_states.c.mention_count < MENTION_COUNT_MAX,
                                        read_states.c.mention_count + 1), else_=read_states.c.mention_count),
                    updated_at=uow.now)
        )
    fresh = [u for u in dict.fromkeys(user_ids) if u not in existing]
    for user_id in fresh:
        await conn.execute(dialect.insert_ignore(conn, read_states, {
            "user_id": user_id, "channel_id": channel_id, "last_read_message_id": None, "mention_count": 1,
            "updated_at": uow.now}))


async def drop_mentions(uow: UnitOfWork, row: RowMapping | dict[str, Any]) -> None:
    """Undo the `bump_mentions` of a deleted message for those who have not read past it: the count is of
    existing messages after the read mark (OpenAPI: listReadStates). A count at the cap stands for "more than 99" and
    stays there: the true count above the cap is unknown, and lowering it could show 99 for 150."""
    if row["kind"] == "system":
        return
    if row["kind"] == "private":
        who = read_states.c.user_id == row["recipient_id"]
    elif row["mention_everyone"]:
        who = read_states.c.user_id != row["author_id"]
    else:
        mentioned = [int(m) for m in row["mentions"] or [] if int(m) != row["author_id"]]
        if not mentioned:
            return
        who = read_states.c.user_id.in_(mentioned)
    await uow.conn.execute(
        update(read_states)
        .where(read_states.c.channel_id == row["channel_id"], who, read_states.c.mention_count > 0,
               read_states.c.mention_count < MENTION_COUNT_MAX,
               (read_states.c.last_read_message_id.is_(None)) | (read_states.c.last_read_message_id < row["id"]))
        .values(mention_count=read_states.c.mention_count - 1)
    )


@dataclass(frozen=True)
class PendingMark:
    """A read mark about to be stored, with the mentions counted after it up to message `through`."""

    user_id: int
    channel_id: int
    message_id: int | None
    mention_count: int
    through: int | None


async def count_mentions(conn: Any, user_id: int, channel_id: int, after: int | None,
                         through: int | None = None) -> int:
    """Mentions of the user in (after, through], at most MENTION_COUNT_MAX: the scan stops at the cap."""
    bounds = [messages.c.id > after] if after is not None else []
    if through is not None:
        bounds.append(messages.c.id <= through)
    hits = (
        select(literal(1)).select_from(messages)
        .where(messages.c.channel_id == channel_id, *bounds, messages.c.author_id != user_id,
               messages.c.kind != "system", _mentions(user_id))
        .limit(MENTION_COUNT_MAX)
        .subquery()
    )
    return int((await conn.execute(select(func.count()).select_from(hits))).scalar_one())


async def prepare_mark(conn: Any, user_id: int, channel_id: int, message_id: int | None) -> PendingMark:
    """The counting half of an acknowledgement, for a read transaction: mentions after the mark up to the
    room's newest message now."""
    through = (await conn.execute(
        select(func.max(messages.c.id)).where(messages.c.channel_id == channel_id)
    )).scalar_one_or_none()
    counted = 0 if through is None else await count_mentions(conn, user_id, channel_id, message_id, through)
    return PendingMark(user_id, channel_id, message_id, counted, through)


async def mark_read(uow: UnitOfWork, mark: PendingMark) -> dict[str, Any]:
    """Store the read mark (it may move backwards to mark unread) with its mention count, adding the
    mentions sent since `prepare_mark` counted (a few messages at most, so the write stays short)."""
    count = mark.mention_count
    if count < MENTION_COUNT_MAX:
        since = max((i for i in (mark.message_id, mark.through) if i is not None), default=None)
        count = min(count + await count_mentions(uow.conn, mark.user_id, mark.channel_id, since),
                    MENTION_COUNT_MAX)
    values = {"user_id": mark.user_id, "channel_id": mark.channel_id, "last_read_message_id": mark.message_id,
              "mention_count": count, "updated_at": uow.now}
    await uow.conn.execute(dialect.upsert(uow.conn, read_states, values, ["user_id", "channel_id"],
                                          ["last_read_message_id", "mention_count", "updated_at"]))
    return values


def _mentions(user_id: int) -> Any:
    # Mention ids are stored as JSON strings; a text match on the quoted id is portable across databases.
    # A private message counts only for its recipient: others named in it cannot see it.
    return and_(
        messages.c.kind != "private",
        messages.c.mentions.is_not(None),
        func.cast(messages.c.mentions, type_=messages.c.content.type).like(f'%"{user_id}"%'),
    ) | (messages.c.mention_everyone.is_(True)) | (messages.c.recipient_id == user_id)


async def list_read_states(uow: UnitOfWork, user_id: int) -> list[dict[str, Any]]:
    rows = (await uow.conn.execute(
        select(read_states).where(read_states.c.user_id == user_id).order_by(read_states.c.channel_id)
    )).mappings()
    return [read_state_view(r) for r in rows]

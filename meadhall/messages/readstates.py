"""Read states (API.md 2.32): a row per user and room once the user acknowledged it or was mentioned
there. `mention_count` counts mentions after the last read message; acknowledging resets it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import RowMapping, and_, func, select, update

from meadhall.core.clock import iso
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
            .values(mention_count=read_states.c.mention_count + 1, updated_at=uow.now)
        )
    fresh = [u for u in dict.fromkeys(user_ids) if u not in existing]
    for user_id in fresh:
        await conn.execute(dialect.insert_ignore(conn, read_states, {
            "user_id": user_id, "channel_id": channel_id, "last_read_message_id": None, "mention_count": 1,
            "updated_at": uow.now}))


async def drop_mentions(uow: UnitOfWork, row: RowMapping | dict[str, Any]) -> None:
    """Undo the `bump_mentions` of a deleted message for those who have not read past it: the count is of
    existing messages after the read mark (API.md 2.32)."""
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
               (read_states.c.last_read_message_id.is_(None)) | (read_states.c.last_read_message_id < row["id"]))
        .values(mention_count=read_states.c.mention_count - 1)
    )


async def mark_read(uow: UnitOfWork, user_id: int, channel_id: int, message_id: int | None) -> dict[str, Any]:
    """Set the read mark (it may move backwards to mark unread) and recount mentions after it."""
    conn = uow.conn
    after = [messages.c.id > message_id] if message_id is not None else []
    mention_count = (await conn.execute(
        select(func.count()).select_from(messages).where(
            messages.c.channel_id == channel_id, *after, messages.c.author_id != user_id,
            messages.c.kind != "system",
            _mentions(user_id),
        )
    )).scalar_one()
    values = {"user_id": user_id, "channel_id": channel_id, "last_read_message_id": message_id,
              "mention_count": int(mention_count), "updated_at": uow.now}
    await conn.execute(dialect.upsert(conn, read_states, values, ["user_id", "channel_id"],
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

"""SQL of calls (docs/social.md, "Calls"): a call is ongoing while `ongoing_channel_id` holds its
conversation's id; the unique constraint on that column keeps one ongoing call per conversation."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import call_participants, calls, channels, dm_participants
from meadhall.social.calls.rows import CallParticipantRow, CallRow


async def lock_conversation(conn: AsyncConnection, channel_id: int) -> None:
    """The conversation's row, taken before its call rows by every call writer: conversation changes take
    it first too, so one order rules out deadlocks."""
    await conn.execute(select(channels.c.id).where(channels.c.id == channel_id).with_for_update())


async def select_ongoing_call(conn: AsyncConnection, channel_id: int, *, lock: bool = False) -> CallRow | None:
    stmt = select(calls).where(calls.c.ongoing_channel_id == channel_id)
    if lock:
        stmt = stmt.with_for_update()
    return cast("CallRow | None", (await conn.execute(stmt)).mappings().first())


async def select_calls_by_ids(conn: AsyncConnection, call_ids: Iterable[int], *, lock: bool = False) -> list[CallRow]:
    """Calls by id, in id order (the order every writer locks several calls in)."""
    ids = sorted(set(call_ids))
    if not ids:
        return []
    stmt = select(calls).where(calls.c.id.in_(ids)).order_by(calls.c.id)
    if lock:
        stmt = stmt.with_for_update()
    return cast("list[CallRow]", list((await conn.execute(stmt)).mappings()))


async def select_participants_of_calls(conn: AsyncConnection, call_ids: Iterable[int]
                                       ) -> dict[int, list[CallParticipantRow]]:
    """call id -> its participants (user id order), for many calls in one query."""
    ids = sorted(set(call_ids))
    out: dict[int, list[CallParticipantRow]] = defaultdict(list)
    if not ids:
        return out
    stmt = (select(call_participants).where(call_participants.c.call_id.in_(ids))
            .order_by(call_participants.c.call_id, call_participants.c.user_id))
    for row in (await conn.execute(stmt)).mappings():
        out[row["call_id"]].append(cast(CallParticipantRow, row))
    return out


async def select_call_page(conn: AsyncConnection, channel_id: int, before: int | None, limit: int) -> list[CallRow]:
    """Up to `limit` + 1 calls of the conversation, newest first (the extra one tells `has_more`)."""
    stmt = select(calls).where(calls.c.channel_id == channel_id)
    if before is not None:
        stmt = stmt.where(calls.c.id < before)
    stmt = stmt.order_by(calls.c.id.desc()).limit(limit + 1)
    return cast("list[CallRow]", list((await conn.execute(stmt)).mappings()))


# Built once (READY runs it): building it per call cost more than running it.
_ONGOING_CALLS_OF_USER = (select(calls)
                          .join(dm_participants, dm_participants.c.channel_id == calls.c.ongoing_channel_id)
                          .where(dm_participants.c.user_id == bindparam("user_id")).order_by(calls.c.id))


async def select_ongoing_calls_of_user(conn: AsyncConnection, user_id: int) -> list[CallRow]:
    """The ongoing calls of the user's conversations (READY), one query whatever their number."""
    return cast("list[CallRow]", list((await conn.execute(_ONGOING_CALLS_OF_USER, {"user_id": user_id})).mappings()))


async def select_joined_call_ids(conn: AsyncConnection, user_id: int) -> list[int]:
    """Ongoing calls in which the user is `joined` (at most one, by the one-voice-context rule)."""
    stmt = (select(calls.c.id).join(call_participants, call_participants.c.call_id == calls.c.id)
            .where(call_participants.c.user_id == user_id, call_participants.c.state == "joined",
                   calls.c.ongoing_channel_id.is_not(None)))
    return [int(i) for i in (await conn.execute(stmt)).scalars()]


async def select_ringing_due(conn: AsyncConnection, created_before: datetime) -> list[tuple[int, int]]:
    """(call id, conversation id) of ongoing calls created at or before the cutoff that still ring
    (the call itself, or one of its participants)."""
    ringing = select(call_participants.c.call_id).where(call_participants.c.state == "ringing")
    stmt = (select(calls.c.id, calls.c.channel_id)
            .where(calls.c.ongoing_channel_id.is_not(None), calls.c.created_at <= created_before,
                   (calls.c.status == "ringing") | calls.c.id.in_(ringing))
            .order_by(calls.c.id))
    return [(int(r[0]), int(r[1])) for r in (await conn.execute(stmt)).all()]


async def select_joined_participants(conn: AsyncConnection, channel_id: int | None = None
                                     ) -> list[tuple[int, int, int, datetime | None]]:
    """(call id, conversation id, user id, joined_at) of every `joined` participant of an ongoing call (of
    that conversation's, with `channel_id`)."""
    stmt = (select(calls.c.id, calls.c.channel_id, call_participants.c.user_id, call_participants.c.joined_at)
            .join(call_participants, call_participants.c.call_id == calls.c.id)
            .where(calls.c.ongoing_channel_id.is_not(None), call_participants.c.state == "joined")
            .order_by(calls.c.id, call_participants.c.user_id))
    if channel_id is not None:
        stmt = stmt.where(calls.c.ongoing_channel_id == channel_id)
    return [(int(r[0]), int(r[1]), int(r[2]), r[3]) for r in (await conn.execute(stmt)).all()]


async def insert_call(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(calls).values(values))


async def insert_call_participants(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    if rows:
        await conn.execute(insert(call_participants), rows)


async def update_call_row(conn: AsyncConnection, call_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(calls).where(calls.c.id == call_id).values(values))


async def update_call_participant(conn: AsyncConnection, call_id: int, user_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(call_participants)
                       .where(call_participants.c.call_id == call_id, call_participants.c.user_id == user_id)
                       .values(values))

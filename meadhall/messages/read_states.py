"""Read states (OpenAPI: ackChannel, listReadStates): a row per user and room once the user acknowledged it or
was mentioned there. `mention_count` counts mentions after the last read message; acknowledging resets it.
Sends and deletions keep the counts (`bump_mentions`, `drop_mentions`); `do_ack` stores a read mark.

An acknowledgement counts in the mention tables (`user_mentions`, `everyone_mentions`, written with each
message): ranges of their primary keys after the read mark, so it costs the same in a room of a hundred messages
and of a million (docs/mentions.md). Counts stop at MENTION_COUNT_MAX (clients show "99+" above 99), and the
count of an acknowledgement is taken in a read transaction before the short write that stores it (on SQLite a
write transaction holds the database's single write lock)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.auth.sessions import Principal
from meadhall.core.clock import iso
from meadhall.core.limits import MENTION_COUNT_MAX
from meadhall.db.uow import UnitOfWork
from meadhall.messages import queries
from meadhall.messages.events import notify_read_state
from meadhall.messages.history import access_visible_message
from meadhall.messages.rooms import access_message_room
from meadhall.messages.rows import MessageFields, ReadStateRow
from meadhall.runtime import Runtime


def read_state_view(row: ReadStateRow) -> dict[str, Any]:
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
    existing = await queries.select_read_state_user_ids(conn, channel_id, user_ids)
    if existing:
        await queries.update_mention_counts_up(conn, channel_id, list(existing), MENTION_COUNT_MAX, uow.now)
    fresh = [u for u in dict.fromkeys(user_ids) if u not in existing]
    for user_id in fresh:
        await queries.insert_read_state_once(conn, {
            "user_id": user_id, "channel_id": channel_id, "last_read_message_id": None, "mention_count": 1,
            "updated_at": uow.now})


async def drop_mentions(uow: UnitOfWork, row: MessageFields) -> None:
    """Undo the `bump_mentions` of a deleted message for those who have not read past it: the count is of
    existing messages after the read mark (OpenAPI: listReadStates). A count at the cap stands for "more than 99" and
    stays there: the true count above the cap is unknown, and lowering it could show 99 for 150."""
    if row["kind"] == "system":
        return
    if row["kind"] == "private":
        who = queries.MentionedUsers(user_ids=[cast(int, row["recipient_id"])])  # a private message names one
    elif row["mention_everyone"]:
        who = queries.MentionedUsers(all_but=row["author_id"])
    else:
        mentioned = [int(m) for m in row["mentions"] or [] if int(m) != row["author_id"]]
        if not mentioned:
            return
        who = queries.MentionedUsers(user_ids=mentioned)
    await queries.update_mention_counts_down(uow.conn, row["channel_id"], row["id"], who, MENTION_COUNT_MAX)


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
    """Mentions of the user in (after, through], at most MENTION_COUNT_MAX: index ranges of the mention tables
    (messages/queries.mention_rows), never a pass over the room's messages."""
    return await queries.select_mention_count(conn, user_id, channel_id, after, through, MENTION_COUNT_MAX)


async def prepare_mark(conn: Any, user_id: int, channel_id: int, message_id: int | None) -> PendingMark:
    """The counting half of an acknowledgement, for a read transaction: mentions after the mark up to the
    room's newest message now."""
    through = await queries.select_newest_message_id(conn, channel_id)
    counted = 0 if through is None else await count_mentions(conn, user_id, channel_id, message_id, through)
    return PendingMark(user_id, channel_id, message_id, counted, through)


async def mark_read(uow: UnitOfWork, mark: PendingMark) -> ReadStateRow:
    """Store the read mark (it may move backwards to mark unread) with its mention count, adding the
    mentions sent since `prepare_mark` counted (a few messages at most, so the write stays short)."""
    count = mark.mention_count
    if count < MENTION_COUNT_MAX:
        since = max((i for i in (mark.message_id, mark.through) if i is not None), default=None)
        count = min(count + await count_mentions(uow.conn, mark.user_id, mark.channel_id, since),
                    MENTION_COUNT_MAX)
    values: ReadStateRow = {"user_id": mark.user_id, "channel_id": mark.channel_id, "last_read_message_id": mark.message_id,
              "mention_count": count, "updated_at": uow.now}
    await queries.upsert_read_state(uow.conn, values)
    return values


async def read_state_views(conn: AsyncConnection, user_id: int) -> list[dict[str, Any]]:
    """The user's read states, by room id (READY carries them too: gateway/ready.py)."""
    return [read_state_view(r) for r in await queries.select_read_states(conn, user_id)]


# ---- acknowledging a room and listing one's read states ------------------------------------------


async def do_ack(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str | None
                 ) -> dict[str, Any]:
    """Mark read up to a message (default: the newest the caller can see); READ_STATE_UPDATE to the
    user's other sessions. The mention count is taken in a read transaction first; the write transaction
    re-checks access (the room may have gone meanwhile) and stores the mark."""
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        message_id = await _mark_target(uow.conn, room.channel_id, principal.user_id, raw_message_id)
        pending = await prepare_mark(uow.conn, principal.user_id, room.channel_id, message_id)
    async with rt.uow() as uow:
        await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        state = read_state_view(await mark_read(uow, pending))
        uow.emit(notify_read_state(state, principal.user_id, principal.session_id))
    return state


async def _mark_target(conn: AsyncConnection, channel_id: int, user_id: int, raw_message_id: str | None
                       ) -> int | None:
    if raw_message_id is not None:
        return int((await access_visible_message(conn, channel_id, user_id, raw_message_id))["id"])
    rows, _ = await queries.select_page(conn, channel_id, user_id, before=None, after=None, limit=1)
    return int(rows[0]["id"]) if rows else None


async def access_read_states(rt: Runtime, principal: Principal) -> list[dict[str, Any]]:
    async with rt.read() as uow:
        return await read_state_views(uow.conn, principal.user_id)

"""SQL of conversations: their `channels` rows (type `dm`, no guild), their participants, and the reads the
conversation list needs for any number of conversations in a fixed number of statements."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from itertools import groupby
from operator import itemgetter
from typing import Any, cast

from sqlalchemy import Row, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import SUMMARY_COLUMNS, SummaryRow
from meadhall.db.schema import channels, dm_participants, messages, read_states, users
from meadhall.guilds.rows import ChannelRow
from meadhall.messages.rows import MessageRow
from meadhall.social.conversations.rows import ParticipantRow


def pair_key(a: int, b: int) -> str:
    """`channels.dm_pair` of a one-to-one conversation: "<low id>:<high id>"."""
    low, high = sorted((a, b))
    return f"{low}:{high}"


async def select_oldest_pair_channel(conn: AsyncConnection, a: int, b: int) -> int | None:
    stmt = (select(channels.c.id).where(channels.c.dm_pair == pair_key(a, b), channels.c.type == "dm")
            .order_by(channels.c.id).limit(1))
    return cast("int | None", (await conn.execute(stmt)).scalar())


async def insert_conversation(conn: AsyncConnection, row: dict[str, Any], participant_ids: list[int],
                              now: datetime) -> None:
    await conn.execute(insert(channels).values(**row))
    await insert_participants(conn, int(row["id"]), participant_ids, now)


async def insert_participants(conn: AsyncConnection, channel_id: int, user_ids: list[int], now: datetime) -> None:
    await conn.execute(insert(dm_participants), [
        {"channel_id": channel_id, "user_id": user_id, "joined_at": now} for user_id in user_ids])


async def delete_participant(conn: AsyncConnection, channel_id: int, user_id: int) -> None:
    """The participant row and their read mark of the conversation (it no longer exists for them)."""
    await conn.execute(delete(dm_participants).where(dm_participants.c.channel_id == channel_id,
                                                     dm_participants.c.user_id == user_id))
    await conn.execute(delete(read_states).where(read_states.c.channel_id == channel_id,
                                                 read_states.c.user_id == user_id))


async def update_conversation_row(conn: AsyncConnection, channel_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(channels).where(channels.c.id == channel_id, channels.c.type == "dm").values(**values))


async def delete_conversation_row(conn: AsyncConnection, channel_id: int) -> None:
    """The conversation; its participants, messages, reactions, read marks and calls go by cascade."""
    await conn.execute(delete(channels).where(channels.c.id == channel_id, channels.c.type == "dm"))


# The statements of the conversation list are built once (a list or READY runs them all): building one
# cost more than running it, a third of the list's SQL time with 300 conversations.
_MINE = select(dm_participants.c.channel_id).where(dm_participants.c.user_id == bindparam("user_id"))
_MINE_ALIAS = dm_participants.alias("mine")
# What a Conversation object shows of its room (conversations.views reads them as tuples, in this order), and
# the version its kept last message is checked against: a list of 300 read all 18 columns of `channels`, most
# a guild room's. kept by trigger: see derived registry "last_message_id", "has_private", "message_version".
LISTED_NAMES = ("id", "is_group", "name", "icon_file_id", "dm_owner_id", "last_message_id", "has_private",
                "message_version", "created_at")
_LISTED = tuple(channels.c[name] for name in LISTED_NAMES)
_CONVERSATIONS = select(*_LISTED).where(channels.c.id.in_(_MINE.scalar_subquery()), channels.c.type == "dm")
# A self-join from the user's own rows (index on user_id, then the primary key per conversation), sorted
# by the database: an `IN (subquery)` with ORDER BY made SQLite walk and sort the whole table; the join
# sorts only the user's few hundred rows.
_PARTICIPANTS = (select(dm_participants.c.channel_id, dm_participants.c.user_id)
                 .join(_MINE_ALIAS, _MINE_ALIAS.c.channel_id == dm_participants.c.channel_id)
                 .where(_MINE_ALIAS.c.user_id == bindparam("user_id"))
                 .order_by(dm_participants.c.channel_id, dm_participants.c.joined_at, dm_participants.c.user_id))
# The participants' accounts and the rooms' last messages are selected through the user's own rows rather
# than by lists of ids (300 conversations: two lists of 300 values to expand and bind).
_PARTICIPANT_IDS = (select(dm_participants.c.user_id)
                    .join(_MINE_ALIAS, _MINE_ALIAS.c.channel_id == dm_participants.c.channel_id)
                    .where(_MINE_ALIAS.c.user_id == bindparam("user_id")))
_PARTICIPANT_SUMMARIES = select(*SUMMARY_COLUMNS).where(users.c.id.in_(_PARTICIPANT_IDS.scalar_subquery()))
_LAST_MESSAGE_IDS = select(channels.c.last_message_id).where(
    channels.c.id.in_(_MINE.scalar_subquery()), channels.c.type == "dm", channels.c.last_message_id.is_not(None))
# What a Message object shows, as history selects it: every column but `content_norm`, the search copy.
_LAST_MESSAGES = select(*(c for c in messages.c if c.name != "content_norm")).where(
    messages.c.id.in_(_LAST_MESSAGE_IDS.scalar_subquery()))


async def select_conversations_of_user(conn: AsyncConnection, user_id: int) -> Sequence[Row[Any]]:
    """The user's conversations as tuples of the LISTED columns (read as tuples: 300 mappings cost a
    fifth more to read)."""
    return (await conn.execute(_CONVERSATIONS, {"user_id": user_id})).all()


async def select_participant_ids_of_user_conversations(conn: AsyncConnection, user_id: int) -> dict[int, list[int]]:
    """channel id -> its participants' ids (earliest joined first), for every conversation of the user.
    Their `joined_at` only orders them: left unread, it is 600 values fewer to convert for 300 conversations."""
    rows = (await conn.execute(_PARTICIPANTS, {"user_id": user_id})).all()
    return {channel_id: [member_id for _, member_id in group] for channel_id, group in groupby(rows, itemgetter(0))}


async def select_participant_summaries(conn: AsyncConnection, user_id: int) -> dict[int, SummaryRow]:
    """user id -> the summary columns of everybody in the user's conversations, the user included."""
    rows = (await conn.execute(_PARTICIPANT_SUMMARIES, {"user_id": user_id})).mappings().all()
    return {row["id"]: cast(SummaryRow, row) for row in rows}


async def select_last_messages(conn: AsyncConnection, user_id: int) -> dict[int, MessageRow]:
    """message id -> row of the rooms' `last_message_id` of the user's conversations."""
    rows = (await conn.execute(_LAST_MESSAGES, {"user_id": user_id})).mappings().all()
    return {row["id"]: cast(MessageRow, row) for row in rows}


async def select_newest_private_ids(conn: AsyncConnection, channel_ids: Iterable[int], user_id: int) -> dict[int, int]:
    """channel id -> the newest `private` message the user is a party of (the rooms' `last_message_id`
    counts no private message). Asked only for conversations that ever held one (`has_private`)."""
    wanted = sorted(set(channel_ids))
    if not wanted:
        return {}
    stmt = (select(messages.c.channel_id, func.max(messages.c.id))
            .where(messages.c.channel_id.in_(wanted), messages.c.kind == "private",
                   or_(messages.c.author_id == user_id, messages.c.recipient_id == user_id))
            .group_by(messages.c.channel_id))
    return {int(c): int(m) for c, m in (await conn.execute(stmt)).all()}


async def select_dm_channel(conn: AsyncConnection, channel_id: int) -> ChannelRow | None:
    stmt = select(channels).where(channels.c.id == channel_id, channels.c.type == "dm")
    return cast("ChannelRow | None", (await conn.execute(stmt)).mappings().first())


async def select_participants(conn: AsyncConnection, channel_id: int) -> list[ParticipantRow]:
    stmt = (select(dm_participants).where(dm_participants.c.channel_id == channel_id)
            .order_by(dm_participants.c.joined_at, dm_participants.c.user_id))
    return cast("list[ParticipantRow]", list((await conn.execute(stmt)).mappings()))

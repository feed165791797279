"""SQL of conversations: their `channels` rows (type `dm`, no guild), their participants, and the reads the
conversation list needs for any number of conversations in a fixed number of statements."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql import Select

from meadhall.db.schema import channels, dm_participants, messages, read_states
from meadhall.guilds.rows import ChannelRow
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


def _mine(user_id: int) -> Any:
    return select(dm_participants.c.channel_id).where(dm_participants.c.user_id == user_id).scalar_subquery()


async def select_conversations_of_user(conn: AsyncConnection, user_id: int) -> list[ChannelRow]:
    stmt = select(channels).where(channels.c.id.in_(_mine(user_id)), channels.c.type == "dm")
    return cast("list[ChannelRow]", (await conn.execute(stmt)).mappings().all())


async def select_participants_of_user_conversations(conn: AsyncConnection, user_id: int
                                                    ) -> dict[int, list[ParticipantRow]]:
    """channel id -> its participants (earliest joined first), for every conversation of the user.

    A self-join from the user's own rows (index on user_id, then the primary key per conversation), sorted
    by the database (an `IN (subquery)` with ORDER BY made SQLite walk and sort the whole table; the join
    sorts only the user's few hundred rows) and read as plain tuples."""
    mine = dm_participants.alias("mine")
    stmt = (select(dm_participants.c.channel_id, dm_participants.c.user_id, dm_participants.c.joined_at)
            .join(mine, mine.c.channel_id == dm_participants.c.channel_id)
            .where(mine.c.user_id == user_id)
            .order_by(dm_participants.c.channel_id, dm_participants.c.joined_at, dm_participants.c.user_id))
    out: dict[int, list[ParticipantRow]] = {}
    for channel_id, member_id, joined_at in (await conn.execute(stmt)).all():
        row: ParticipantRow = {"channel_id": channel_id, "user_id": member_id, "joined_at": joined_at}
        found = out.get(channel_id)
        if found is None:
            out[channel_id] = [row]
        else:
            found.append(row)
    return out


def participant_ids_of_user_conversations(user_id: int) -> Select[Any]:
    """The ids of everybody in the user's conversations, the user included (a statement to select from)."""
    mine = dm_participants.alias("mine")
    return (select(dm_participants.c.user_id)
            .join(mine, mine.c.channel_id == dm_participants.c.channel_id)
            .where(mine.c.user_id == user_id))


def last_message_ids_of_user_conversations(user_id: int) -> Select[Any]:
    """The rooms' `last_message_id` of the user's conversations (a statement to select from)."""
    return select(channels.c.last_message_id).where(channels.c.id.in_(_mine(user_id)), channels.c.type == "dm",
                                                    channels.c.last_message_id.is_not(None))


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

"""What the conversation operations share (docs/social.md "Direct conversations"): finding the users a
request names, the built group name, and announcing a conversation's new state to its participants."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import UserRow, select_users_by_ids
from meadhall.accounts.views import user_summary
from meadhall.core.errors import AppError
from meadhall.core.ids import parse_id
from meadhall.core.limits import GROUP_DM_MAX_INVITED
from meadhall.db.uow import UnitOfWork
from meadhall.messages.queries import lock_channel
from meadhall.realtime.events import EventType
from meadhall.social.conversations.access import Conversation, load_conversation
from meadhall.social.conversations.events import notify_conversation
from meadhall.social.conversations.views import ConversationView, views_for

MAX_PARTICIPANTS = GROUP_DM_MAX_INVITED + 1
NAME_MAX = 100


async def select_live_users(conn: AsyncConnection, user_ids: Iterable[int]) -> dict[int, UserRow]:
    """The accounts of these users; 404 `user.not_found` when one is unknown or deleted."""
    wanted = set(user_ids)
    found = await select_users_by_ids(conn, wanted)
    if any(uid not in found or found[uid]["deleted_at"] is not None for uid in wanted):
        raise AppError("user.not_found")
    return found


def user_id_of(raw: str) -> int:
    """A user id from a path: a malformed one names nobody (404 `user.not_found`)."""
    user_id = parse_id(raw)
    if user_id is None:
        raise AppError("user.not_found")
    return user_id


def built_name(ordered_ids: Sequence[int], users: dict[int, UserRow], uow: UnitOfWork) -> str:
    """A group's name when none is given: the display names of all participants, joined with ", ",
    truncated to 100 characters (stored: later changes of members or names leave it as it is)."""
    names = [user_summary(users[uid], uow.now)["display_name"] for uid in ordered_ids if uid in users]
    return ", ".join(names)[:NAME_MAX]


async def locked(uow: UnitOfWork, conv: Conversation, user_id: int) -> Conversation:
    """The conversation read again under its row lock: changes of participants, name or icon run one
    after the other (two adds at once cannot pass the 10-participant limit together)."""
    await lock_channel(uow.conn, conv.channel_id)
    fresh = await load_conversation(uow.conn, conv.channel_id)
    if fresh is None or not fresh.has(user_id):
        raise AppError("channel.not_found")
    return fresh


async def reload(uow: UnitOfWork, channel_id: int) -> Conversation:
    conv = await load_conversation(uow.conn, channel_id)
    assert conv is not None  # written in this transaction
    return conv


async def announce(uow: UnitOfWork, type_: EventType, conv: Conversation, receivers: Iterable[int]) -> None:
    """DM_CHANNEL_CREATE / UPDATE to these participants, each with its own view."""
    wanted = [r for r in conv.participant_ids if r in set(receivers)]
    if wanted:
        uow.emit(*notify_conversation(type_, await views_for(uow.conn, conv, wanted, uow.now)))


async def own_view(uow: UnitOfWork, conv: Conversation, user_id: int) -> ConversationView:
    return (await views_for(uow.conn, conv, [user_id], uow.now))[user_id]

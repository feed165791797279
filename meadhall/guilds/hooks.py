"""What a guild change causes in higher layers, offered as hooks (house rule 9: guilds never import
messages or social): a guild change that the room reports with a system message (a room created,
a member joined, left, was kicked or banned), and, further down, whether a user takes part in a conversation,
who may now be in the guild's voice rooms, and a ban's purge of messages. Each is a `Hook` (docs/architecture.md,
"Hooks between layers"). `meadhall.messages.setup` adds the system message at start; it runs inside the
caller's unit of work, so the message is written in the same transaction as the change it reports."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core.hooks import Hook
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime

NoticeType = Literal["channel_create", "member_join", "member_leave", "member_kick", "member_ban"]


@dataclass(frozen=True)
class GuildNotice:
    """A change to report in a room. `channel_id` None: the guild has no system room, nothing is posted."""

    guild_id: int
    channel_id: int | None
    type: NoticeType
    user_id: int
    display_name: str
    actor_id: int | None = None
    via: str | None = None  # how a member joined ("invite", "public")
    viewers: list[int] | None = None  # who sees the room, when the caller knows it already


NoticeHook = Callable[[UnitOfWork, GuildNotice], Awaitable[None]]
guild_notice: Hook[NoticeHook] = Hook()


async def announce_in_room(uow: UnitOfWork, notice: GuildNotice) -> None:
    for hook in guild_notice:
        await hook(uow, notice)


# Whether a user takes part in the conversation with this id (registered by meadhall.social.conversations):
# a room-only operation aimed at a conversation the caller can see answers 422 `channel.wrong_type`
# rather than 404 (docs/social.md). Guilds know no conversations, so they ask.
ParticipantCheck = Callable[[AsyncConnection, int, int], Awaitable[bool]]
conversation_check: Hook[ParticipantCheck] = Hook()


async def takes_part_in_conversation(conn: AsyncConnection, user_id: int, channel_id: int) -> bool:
    for check in conversation_check:
        if await check(conn, user_id, channel_id):
            return True
    return False


# Who may be in the guild's voice rooms may have changed (a member left, was kicked or banned, timed out; a
# room was deleted; roles or overrides changed; the guild was deleted). Called after the change committed;
# the voice rooms, which sit above guilds, register what that means (voice/setup.py).
AccessHook = Callable[[Runtime, int], Awaitable[None]]
access_change: Hook[AccessHook] = Hook()


async def access_changed(rt: Runtime, guild_id: int) -> None:
    for hook in access_change:
        await hook(rt, guild_id)


# A ban with `delete_message_seconds` deletes the banned user's messages in the guild since a time (OpenAPI:
# banUser). Messages sit above guilds, so they register how (messages/setup.py); the hook runs inside the
# ban's unit of work, after the member was removed, and answers how many messages went.
PurgeHook = Callable[[Runtime, UnitOfWork, int, int, datetime], Awaitable[int]]
member_purge: Hook[PurgeHook] = Hook()


async def purge_member_messages(rt: Runtime, uow: UnitOfWork, guild_id: int, user_id: int, since: datetime) -> int:
    deleted = 0
    for hook in member_purge:
        deleted += await hook(rt, uow, guild_id, user_id, since)
    return deleted

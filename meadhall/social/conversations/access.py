"""Load-and-authorise for conversations (docs/social.md): a conversation exists only for its
participants; everybody else, instance administrators included, gets 404."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError
from meadhall.core.ids import parse_id
from meadhall.guilds.access import access_channel
from meadhall.guilds.rows import ChannelRow
from meadhall.social.conversations.queries import select_dm_channel, select_participants
from meadhall.social.conversations.rows import ParticipantRow


@dataclass(frozen=True)
class Conversation:
    channel: ChannelRow
    participants: list[ParticipantRow]  # earliest joined first

    @property
    def channel_id(self) -> int:
        return int(self.channel["id"])

    @property
    def participant_ids(self) -> list[int]:
        return [p["user_id"] for p in self.participants]

    @property
    def is_group(self) -> bool:
        return bool(self.channel["is_group"])

    @property
    def owner_id(self) -> int | None:
        return self.channel["dm_owner_id"]

    def has(self, user_id: int) -> bool:
        return any(p["user_id"] == user_id for p in self.participants)


async def load_conversation(conn: AsyncConnection, channel_id: int) -> Conversation | None:
    """The conversation with its participants, without authorisation (jobs, hooks)."""
    channel = await select_dm_channel(conn, channel_id)
    if channel is None:
        return None
    return Conversation(channel, await select_participants(conn, channel_id))


async def access_conversation(conn: AsyncConnection, principal: Principal, raw_id: str | int) -> Conversation:
    """The conversation if the caller takes part in it; else 404 `channel.not_found`."""
    channel_id = parse_id(raw_id)
    found = None if channel_id is None else await load_conversation(conn, channel_id)
    if found is None or not found.has(principal.user_id):
        raise AppError("channel.not_found")
    return found


async def access_conversation_or_wrong_type(conn: AsyncConnection, principal: Principal, raw_id: str | int,
                                            now: datetime) -> Conversation:
    """The conversation if the caller takes part in it. A guild room the caller can view answers 422
    `channel.wrong_type` (a conversation operation aimed at a room); anything else 404 `channel.not_found`."""
    channel_id = parse_id(raw_id)
    found = None if channel_id is None else await load_conversation(conn, channel_id)
    if found is not None:
        if not found.has(principal.user_id):
            raise AppError("channel.not_found")
        return found
    await access_channel(conn, principal, raw_id, now)  # 404 unless the caller can view the room
    raise AppError("channel.wrong_type", "Only direct conversations have this operation")

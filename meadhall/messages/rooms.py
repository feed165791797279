"""A room that holds messages, as seen by the caller: which permissions they have there and who may
receive its events. Two kinds: a guild room (`GuildRoom`, permissions computed per docs/reference/permissions.md)
and a direct conversation, which the social domain supplies through the `conversation_room` hook (messages sit
below social and never import it: docs/social.md)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError
from meadhall.core.hooks import Hook
from meadhall.core.ids import parse_id
from meadhall.guilds.access import ChannelContext, require_in, to_overrides, visible_channel
from meadhall.guilds.rows import ChannelRow
from meadhall.messages.rows import MessageFields
from meadhall.realtime.audience import GuildViewers

P = perms.P
MESSAGE_ROOM_TYPES = ("text", "voice")


class MessageRoom(ABC):
    """What every message operation asks of a room, whatever its kind."""

    @property
    @abstractmethod
    def channel(self) -> ChannelRow: ...

    @property
    @abstractmethod
    def guild_id(self) -> int | None: ...

    @property
    @abstractmethod
    def permissions(self) -> int: ...

    @property
    @abstractmethod
    def is_instance_admin(self) -> bool:
        """Whether the caller acts with the instance administrator's bypass here."""

    @property
    @abstractmethod
    def caller(self) -> Mapping[str, Any] | None:
        """The caller's account row when it was read with the room (spares the send path a query)."""

    @property
    def channel_id(self) -> int:
        return int(self.channel["id"])

    @abstractmethod
    def require(self, flag: perms.Permission) -> None:
        """403 `perm.denied` naming the missing permission."""

    def has(self, flag: perms.Permission) -> bool:
        return bool(self.permissions & int(flag))  # int: an operator on the flag costs the enum machinery

    @abstractmethod
    async def viewers(self, conn: AsyncConnection, now: datetime) -> list[int]:
        """Users who may view the room now (computed once per request)."""

    async def check_send(self, conn: AsyncConnection) -> None:
        """A refusal of sending that no permission expresses (a block in a conversation); none by default."""
        del conn

    def exempt_from_slowmode(self) -> bool:
        return True

    async def audience(self, conn: AsyncConnection, now: datetime, row: MessageFields) -> list[int]:
        """Receivers of an event about one message: the viewers; of a private message only its two parties,
        and only while they may still view the room (a party who lost it or left receives nothing)."""
        viewers = await self.viewers(conn, now)
        if row["kind"] == "private":
            return [u for u in (row["author_id"], row["recipient_id"]) if u in viewers]
        return viewers

    async def can_view(self, conn: AsyncConnection, now: datetime, user_id: int) -> bool:
        return user_id in await self.viewers(conn, now)


@dataclass
class GuildRoom(MessageRoom):
    cc: ChannelContext
    _viewers: list[int] | None = None

    @property
    def channel(self) -> ChannelRow:
        return self.cc.channel

    @property
    def channel_id(self) -> int:
        return self.cc.channel_id

    @property
    def guild_id(self) -> int | None:
        return self.cc.guild.guild_id

    @property
    def permissions(self) -> int:
        return self.cc.permissions

    @property
    def is_instance_admin(self) -> bool:
        return self.cc.guild.actor.is_instance_admin

    @property
    def caller(self) -> Mapping[str, Any] | None:
        return self.cc.caller

    def require(self, flag: perms.Permission) -> None:
        require_in(self.cc, flag)

    async def viewers(self, conn: AsyncConnection, now: datetime) -> list[int]:
        if self._viewers is None:
            state = self.cc.state
            if state is None:
                self._viewers = (await GuildViewers.load(conn, self.cc.guild.guild_id, now)).viewers(self.channel_id)
            else:
                self._viewers = state.viewers(self.channel_id, now)
        return self._viewers

    def exempt_from_slowmode(self) -> bool:
        """BYPASS_SLOWMODE held on one's own account. An instance administrator holds every permission through
        the bypass, so theirs are recomputed without it: an administrator who is also the owner or holds the
        permission by role was never limited, and gets no `limits.bypass` entry (docs/reference/permissions.md)."""
        if not self.is_instance_admin:
            return self.has(P.BYPASS_SLOWMODE)
        gc = self.cc.guild
        own = perms.channel_permissions(replace(gc.actor, is_instance_admin=False), gc.roles,
                                        to_overrides(list(self.cc.overrides)))
        return bool(own & P.BYPASS_SLOWMODE)


# (connection, caller, channel id, now) -> the conversation as a room when the caller takes part in it
ConversationResolver = Callable[[AsyncConnection, Principal, int, datetime], Awaitable[MessageRoom | None]]
# (meadhall.social.conversations adds it at start)
conversation_room: Hook[ConversationResolver] = Hook()


async def _conversation_room(conn: AsyncConnection, principal: Principal, raw_id: str, now: datetime
                             ) -> MessageRoom | None:
    channel_id = parse_id(raw_id)
    if channel_id is None:
        return None
    for resolver in conversation_room:
        room = await resolver(conn, principal, channel_id, now)
        if room is not None:
            return room
    return None


async def access_message_room(conn: AsyncConnection, principal: Principal, raw_id: str, now: datetime, *,
                              read_history: bool = False, with_caller: bool = False) -> MessageRoom:
    """The room if the caller may view it (else 404) and it carries messages (else 422); `with_caller`
    reads the caller's account row with a guild room (`room.caller`). A conversation is looked up only
    when no guild room answers, so the guild path costs no extra query."""
    cc = await visible_channel(conn, principal, raw_id, now, with_caller=with_caller)
    room: MessageRoom | None
    if cc is not None:
        if cc.channel["type"] not in MESSAGE_ROOM_TYPES:
            raise AppError("channel.wrong_type", "Categories hold no messages")
        room = GuildRoom(cc)
    else:
        room = await _conversation_room(conn, principal, raw_id, now)
        if room is None:
            raise AppError("channel.not_found")
    if read_history:
        room.require(P.READ_MESSAGE_HISTORY)
    return room

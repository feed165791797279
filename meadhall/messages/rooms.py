"""A room that holds messages, as seen by the caller: which permissions they have there and who may
receive its events. Guild rooms today; conversations plug in here with the social issue."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError
from meadhall.guilds.access import ChannelContext, access_channel, require_in
from meadhall.guilds.rows import ChannelRow
from meadhall.messages.rows import MessageFields
from meadhall.realtime.audience import GuildViewers

P = perms.P
MESSAGE_ROOM_TYPES = ("text", "voice")


@dataclass
class MessageRoom:
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

    def require(self, flag: perms.Permission) -> None:
        require_in(self.cc, flag)

    def has(self, flag: perms.Permission) -> bool:
        return bool(self.cc.permissions & flag)

    async def viewers(self, conn: AsyncConnection, now: datetime) -> list[int]:
        """Members who may view the room now (computed once per request)."""
        if self._viewers is None:
            state = self.cc.state
            if state is None:
                self._viewers = (await GuildViewers.load(conn, self.cc.guild.guild_id, now)).viewers(self.channel_id)
            else:
                self._viewers = state.viewers(self.channel_id, now)
        return self._viewers

    async def audience(self, conn: AsyncConnection, now: datetime, row: MessageFields) -> list[int]:
        """Receivers of an event about one message: the viewers; of a private message only its two parties,
        and only while they may still view the room (a party who lost it or left receives nothing)."""
        viewers = await self.viewers(conn, now)
        if row["kind"] == "private":
            return [u for u in (row["author_id"], row["recipient_id"]) if u in viewers]
        return viewers

    async def can_view(self, conn: AsyncConnection, now: datetime, user_id: int) -> bool:
        return user_id in await self.viewers(conn, now)


async def access_message_room(conn: AsyncConnection, principal: Principal, raw_id: str, now: datetime, *,
                              read_history: bool = False, with_caller: bool = False) -> MessageRoom:
    """The room if the caller may view it (else 404) and it carries messages (else 422); `with_caller`
    reads the caller's account row with it (`room.cc.caller`)."""
    cc = await access_channel(conn, principal, raw_id, now, with_caller=with_caller)
    if cc.channel["type"] not in MESSAGE_ROOM_TYPES:
        raise AppError("channel.wrong_type", "Categories hold no messages")
    room = MessageRoom(cc)
    if read_history:
        room.require(P.READ_MESSAGE_HISTORY)
    return room

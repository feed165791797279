"""A room's background image (OpenAPI: setRoomBackground). The generic upload, check and serve flow is
in `meadhall.files.slots`; the room says who may change it and what changes when it is set."""

from __future__ import annotations

from typing import Any

from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError
from meadhall.db.uow import UnitOfWork
from meadhall.files.slots import Slot
from meadhall.guilds.access import ChannelContext, require_in
from meadhall.guilds.rooms import queries as room_queries
from meadhall.guilds.rooms.events import notify_channel
from meadhall.guilds.rooms.service import access_guild_room
from meadhall.guilds.rooms.views import channel_view
from meadhall.realtime.audience import GuildViewers
from meadhall.realtime.events import EventType

P = perms.P


class RoomBackground:
    slot = Slot("channel.background", "banner", "guild_image_max_bytes")

    def __init__(self, principal: Principal, raw_channel_id: str) -> None:
        self.principal, self.raw_channel_id = principal, raw_channel_id

    async def load(self, uow: UnitOfWork) -> ChannelContext:
        cc = await access_guild_room(uow, self.principal, self.raw_channel_id)
        require_in(cc, P.MANAGE_CHANNEL_BACKGROUND)
        if cc.channel["type"] not in ("text", "voice"):
            raise AppError("channel.wrong_type", "Backgrounds are for text and voice rooms")
        return cc

    def current(self, target: ChannelContext) -> int | None:
        value = target.channel["background_file_id"]
        return None if value is None else int(value)

    def placement(self, target: ChannelContext) -> dict[str, Any]:
        return {"guild_id": target.guild.guild_id, "channel_id": target.channel_id, "owner_id": target.channel_id}

    async def apply(self, uow: UnitOfWork, target: ChannelContext, new_id: int | None, old_id: int | None
                    ) -> dict[str, Any]:
        if new_id == old_id:
            return {"channel": channel_view(target.channel, target.overrides)}
        guild_id = target.guild.guild_id
        await room_queries.update_channel_row(uow.conn, target.channel_id, {"background_file_id": new_id})
        await record(uow, "channel.background_update", actor_id=self.principal.user_id, target_type="channel",
                     target_id=target.channel_id, guild_id=guild_id,
                     data={"background_file_id": None if new_id is None else str(new_id)})
        channel = await room_queries.select_channel(uow.conn, target.channel_id)
        assert channel is not None
        view = channel_view(channel, await room_queries.select_overrides(uow.conn, target.channel_id))
        viewers = (await GuildViewers.load(uow.conn, guild_id, uow.now)).viewers(target.channel_id)
        uow.emit(notify_channel(EventType.CHANNEL_UPDATE, view, viewers))
        return {"channel": view}

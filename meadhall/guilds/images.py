"""The guild's own images: icon, banner and splash (OpenAPI: setGuildIcon, setGuildBanner, setGuildSplash).
The generic upload, check and serve flow is in `meadhall.files.slots`; the guild says who may change
them, where the file row belongs and what changes when it is set."""

from __future__ import annotations

from typing import Any, Literal

from meadhall.audit.diff import changes
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.db.uow import UnitOfWork
from meadhall.files.slots import Slot
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.access import GuildContext, access_guild, require
from meadhall.guilds.events import notify_guild_update
from meadhall.guilds.views import guild_view
from meadhall.realtime.audience import guild_members

P = perms.P
GUILD_IMAGES = ("icon", "banner", "splash")
ImageColumn = Literal["icon_file_id", "banner_file_id", "splash_file_id"]
_COLUMNS: dict[str, ImageColumn] = {"icon": "icon_file_id", "banner": "banner_file_id", "splash": "splash_file_id"}


class GuildImage:
    def __init__(self, principal: Principal, raw_guild_id: str, kind: str) -> None:
        assert kind in GUILD_IMAGES
        self.principal, self.raw_guild_id, self.column = principal, raw_guild_id, _COLUMNS[kind]
        # Icons are served like avatars, banners and splashes like banners (docs/files.md).
        self.slot = Slot(f"guild.{kind}", "avatar" if kind == "icon" else "banner", "guild_image_max_bytes")

    async def load(self, uow: UnitOfWork) -> GuildContext:
        gc = await access_guild(uow.conn, self.principal, self.raw_guild_id, uow.now)
        require(gc, P.MANAGE_GUILD)
        return gc

    def current(self, target: GuildContext) -> int | None:
        return target.guild[self.column]

    def placement(self, target: GuildContext) -> dict[str, Any]:
        return {"guild_id": target.guild_id, "owner_id": target.guild_id}

    async def apply(self, uow: UnitOfWork, target: GuildContext, new_id: int | None, old_id: int | None
                    ) -> dict[str, Any]:
        if new_id == old_id:
            return {"guild": guild_view(target.guild)}
        values: dict[str, Any] = {self.column: new_id}
        await guild_queries.update_guild_row(uow.conn, target.guild_id, values)
        await record(uow, "guild.update", actor_id=self.principal.user_id, target_type="guild",
                     target_id=target.guild_id, guild_id=target.guild_id,
                     data={"changes": changes(target.guild, values)})
        guild = await guild_queries.select_guild(uow.conn, target.guild_id)
        assert guild is not None
        uow.emit(notify_guild_update(guild_view(guild), await guild_members(uow.conn, target.guild_id)))
        return {"guild": guild_view(guild)}

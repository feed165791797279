"""Image slots: the user avatar, guild icon / banner / splash, room background and invitation background
(API.md 3.3, 3.4, 3.5, 3.7). Each answers POST (set or replace) and DELETE (remove) with its parent object.

One flow for all of them: the holder is loaded and authorised before the body is read (404 / 403 / 422
come first), the image is received under its media limit (413) and checked (415), and in one transaction
the holder is authorised again, the new file row written, the holder pointed at it and the old file row
deleted; the old content goes once that transaction has committed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from starlette.requests import Request

from meadhall.accounts import queries as account_queries
from meadhall.accounts.events import notify_user_update
from meadhall.accounts.sessions import Principal
from meadhall.accounts.views import user_private
from meadhall.audit.record import record
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError, permission_denied
from meadhall.db.uow import UnitOfWork
from meadhall.files import queries
from meadhall.files.checks import check_image, image_type_allowed
from meadhall.files.cleanup import drop_files
from meadhall.files.intake import kept_until_commit, take_upload
from meadhall.files.limits import media_limits
from meadhall.guilds import invite_queries
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.access import access_channel, access_guild, load_guild_context, require, require_in
from meadhall.guilds.events import changes, notify_channel, notify_guild_update
from meadhall.guilds.invites import access_invite, invite_view
from meadhall.guilds.members import emit_member_updates
from meadhall.guilds.views import channel_view, guild_view
from meadhall.realtime.audience import GuildViewers, guild_members
from meadhall.runtime import Runtime

P = perms.P
GUILD_IMAGES = ("icon", "banner", "splash")


@dataclass(frozen=True)
class Slot:
    owner: str  # files.owner
    purpose: str  # API.md 2.17
    limit: str  # key of the media limits (5.3)


class Holder(Protocol):
    slot: Slot

    async def load(self, uow: UnitOfWork) -> Any:
        """Load and authorise the holder (404 / 403 / 422)."""

    def current(self, target: Any) -> int | None: ...

    def placement(self, target: Any) -> dict[str, Any]: ...

    async def apply(self, uow: UnitOfWork, target: Any, new_id: int | None, old_id: int | None) -> dict[str, Any]:
        """Point the holder at `new_id`, audit and emit when it changed; return the response body."""


async def set_image(rt: Runtime, principal: Principal, holder: Holder, request: Request) -> dict[str, Any]:
    async with rt.read() as uow:
        await holder.load(uow)
        limit = (await media_limits(uow.conn))[holder.slot.limit]
    new = await take_upload(rt, request, limit=limit, purpose=holder.slot.purpose, uploader_id=principal.user_id,
                            check=check_image, accept=image_type_allowed)
    async with kept_until_commit(rt, new), rt.uow() as uow:
        target = await holder.load(uow)
        old = holder.current(target)
        await queries.insert_file(uow.conn, new.row(uow.now, owner=holder.slot.owner, **holder.placement(target)))
        body = await holder.apply(uow, target, new.id, old)
        await drop_files(uow, rt.files, [old])
    return body


async def remove_image(rt: Runtime, holder: Holder) -> dict[str, Any]:
    async with rt.uow() as uow:
        target = await holder.load(uow)
        old = holder.current(target)
        body = await holder.apply(uow, target, None, old)
        await drop_files(uow, rt.files, [old])
    return body


# ---- the user avatar ---------------------------------------------------------------------------


class Avatar:
    slot = Slot("user.avatar", "avatar", "avatar_max_bytes")

    def __init__(self, rt: Runtime, principal: Principal) -> None:
        self.rt, self.user_id = rt, principal.user_id

    async def load(self, uow: UnitOfWork) -> Any:
        row = await account_queries.get_user(uow.conn, self.user_id)
        assert row is not None
        return row

    def current(self, target: Any) -> int | None:
        return target["avatar_file_id"]  # type: ignore[no-any-return]

    def placement(self, target: Any) -> dict[str, Any]:
        return {"owner_id": self.user_id}

    async def apply(self, uow: UnitOfWork, target: Any, new_id: int | None, old_id: int | None) -> dict[str, Any]:
        if new_id == old_id:
            return {"user": user_private(target, self.rt.keys)}
        await account_queries.update_user(uow.conn, self.user_id, {"avatar_file_id": new_id})
        row = await account_queries.get_user(uow.conn, self.user_id)
        assert row is not None
        # As a profile change (API.md 3.3): the public summary changed, so members of the user's guilds
        # see it too.
        uow.emit(notify_user_update(row, self.rt.keys))
        for guild in await guild_queries.guilds_of_user(uow.conn, self.user_id):
            await emit_member_updates(uow, guild["id"], [self.user_id])
        return {"user": user_private(row, self.rt.keys)}


# ---- guild icon, banner, splash -----------------------------------------------------------------


class GuildImage:
    def __init__(self, principal: Principal, raw_guild_id: str, kind: str) -> None:
        assert kind in GUILD_IMAGES
        self.principal, self.raw_guild_id, self.column = principal, raw_guild_id, f"{kind}_file_id"
        # Icons are served like avatars, banners and splashes like banners (API.md 2.7).
        self.slot = Slot(f"guild.{kind}", "avatar" if kind == "icon" else "banner", "guild_image_max_bytes")

    async def load(self, uow: UnitOfWork) -> Any:
        gc = await access_guild(uow.conn, self.principal, self.raw_guild_id, uow.now)
        require(gc, P.MANAGE_GUILD)
        return gc

    def current(self, target: Any) -> int | None:
        return target.guild[self.column]  # type: ignore[no-any-return]

    def placement(self, target: Any) -> dict[str, Any]:
        return {"guild_id": target.guild_id, "owner_id": target.guild_id}

    async def apply(self, uow: UnitOfWork, target: Any, new_id: int | None, old_id: int | None) -> dict[str, Any]:
        if new_id == old_id:
            return {"guild": guild_view(target.guild)}
        values = {self.column: new_id}
        await guild_queries.update_guild(uow.conn, target.guild_id, values)
        await record(uow, "guild.update", actor_id=self.principal.user_id, target_type="guild",
                     target_id=target.guild_id, guild_id=target.guild_id,
                     data={"changes": changes(target.guild, values)})
        guild = await guild_queries.get_guild(uow.conn, target.guild_id)
        assert guild is not None
        uow.emit(notify_guild_update(guild_view(guild), await guild_members(uow.conn, target.guild_id)))
        return {"guild": guild_view(guild)}


# ---- room background ------------------------------------------------------------------------------


class RoomBackground:
    slot = Slot("channel.background", "banner", "guild_image_max_bytes")

    def __init__(self, principal: Principal, raw_channel_id: str) -> None:
        self.principal, self.raw_channel_id = principal, raw_channel_id

    async def load(self, uow: UnitOfWork) -> Any:
        cc = await access_channel(uow.conn, self.principal, self.raw_channel_id, uow.now)
        require_in(cc, P.MANAGE_CHANNEL_BACKGROUND)
        if cc.channel["type"] not in ("text", "voice"):
            raise AppError("channel.wrong_type", "Backgrounds are for text and voice rooms")
        return cc

    def current(self, target: Any) -> int | None:
        return target.channel["background_file_id"]  # type: ignore[no-any-return]

    def placement(self, target: Any) -> dict[str, Any]:
        return {"guild_id": target.guild.guild_id, "channel_id": target.channel_id, "owner_id": target.channel_id}

    async def apply(self, uow: UnitOfWork, target: Any, new_id: int | None, old_id: int | None) -> dict[str, Any]:
        if new_id == old_id:
            return {"channel": channel_view(target.channel, target.overrides)}
        guild_id = target.guild.guild_id
        await guild_queries.update_channel(uow.conn, target.channel_id, {"background_file_id": new_id})
        await record(uow, "channel.background_update", actor_id=self.principal.user_id, target_type="channel",
                     target_id=target.channel_id, guild_id=guild_id,
                     data={"background_file_id": None if new_id is None else str(new_id)})
        channel = await guild_queries.get_channel(uow.conn, target.channel_id)
        assert channel is not None
        view = channel_view(channel, await guild_queries.overrides_of_channel(uow.conn, target.channel_id))
        viewers = (await GuildViewers.load(uow.conn, guild_id, uow.now)).viewers(target.channel_id)
        uow.emit(notify_channel("CHANNEL_UPDATE", view, viewers))
        return {"channel": view}


# ---- invitation background --------------------------------------------------------------------------


class InviteBackground:
    slot = Slot("invite.background", "banner", "guild_image_max_bytes")

    def __init__(self, rt: Runtime, principal: Principal, raw_code: str) -> None:
        self.rt, self.principal, self.raw_code = rt, principal, raw_code

    async def load(self, uow: UnitOfWork) -> Any:
        """The invitation's creator, or MANAGE_GUILD in its guild (as deleting it, API.md 3.7)."""
        row = await access_invite(uow.conn, self.raw_code, uow.now)
        if row["inviter_id"] != self.principal.user_id:
            gc = await load_guild_context(uow.conn, self.principal, row["guild_id"], uow.now)
            if gc is None:
                raise permission_denied(P.MANAGE_GUILD.name, "Missing permission MANAGE_GUILD in this server")
            require(gc, P.MANAGE_GUILD)
        return row

    def current(self, target: Any) -> int | None:
        return target["background_file_id"]  # type: ignore[no-any-return]

    def placement(self, target: Any) -> dict[str, Any]:
        return {"guild_id": target["guild_id"], "owner_key": target["code"]}

    async def apply(self, uow: UnitOfWork, target: Any, new_id: int | None, old_id: int | None) -> dict[str, Any]:
        row = target
        if new_id != old_id:
            await queries.set_invite_background(uow.conn, target["code"], new_id)
            await record(uow, "invite.background_update", actor_id=self.principal.user_id, target_type="invite",
                         target_id=None, guild_id=target["guild_id"],
                         data={"code": target["code"], "background_file_id": None if new_id is None else str(new_id)})
            row = await access_invite(uow.conn, target["code"], uow.now)
        inviters = await invite_queries.users_by_id(uow.conn, {row["inviter_id"]} - {None})
        return {"invite": invite_view(row, inviters.get(row["inviter_id"]), self.rt.settings.public_origin, uow.now)}

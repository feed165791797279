"""An invitation's background image (OpenAPI: setInviteBackground). The generic upload, check and serve
flow is in `meadhall.files.slots`; the invitation says who may change it and what changes."""

from __future__ import annotations

from typing import Any

from meadhall.accounts import queries as account_queries
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import permission_denied
from meadhall.db.uow import UnitOfWork
from meadhall.files.slots import Slot
from meadhall.guilds.access import load_guild_context, require
from meadhall.guilds.invites import queries as invite_queries
from meadhall.guilds.invites.service import access_invite, invite_view
from meadhall.guilds.rows import InviteRow
from meadhall.runtime import Runtime

P = perms.P


class InviteBackground:
    slot = Slot("invite.background", "banner", "guild_image_max_bytes")

    def __init__(self, rt: Runtime, principal: Principal, raw_code: str) -> None:
        self.rt, self.principal, self.raw_code = rt, principal, raw_code

    async def load(self, uow: UnitOfWork) -> InviteRow:
        """The invitation's creator, or MANAGE_GUILD in its guild (as deleting it, OpenAPI: deleteInvite)."""
        row = await access_invite(uow.conn, self.raw_code, uow.now)
        if row["inviter_id"] != self.principal.user_id:
            gc = await load_guild_context(uow.conn, self.principal, row["guild_id"], uow.now)
            if gc is None:
                raise permission_denied(P.MANAGE_GUILD.name, "Missing permission MANAGE_GUILD in this server")
            require(gc, P.MANAGE_GUILD)
        return row

    def current(self, target: InviteRow) -> int | None:
        value = target["background_file_id"]
        return None if value is None else int(value)

    def placement(self, target: InviteRow) -> dict[str, Any]:
        return {"guild_id": target["guild_id"], "owner_key": target["code"]}

    async def apply(self, uow: UnitOfWork, target: InviteRow, new_id: int | None, old_id: int | None
                    ) -> dict[str, Any]:
        row = target
        if new_id != old_id:
            await invite_queries.update_invite_background(uow.conn, target["code"], new_id)
            await record(uow, "invite.background_update", actor_id=self.principal.user_id, target_type="invite",
                         target_id=None, guild_id=target["guild_id"],
                         data={"code": target["code"], "background_file_id": None if new_id is None else str(new_id)})
            row = await access_invite(uow.conn, target["code"], uow.now)
        inviter = None if row["inviter_id"] is None else await account_queries.select_user(uow.conn, row["inviter_id"])
        return {"invite": invite_view(row, inviter, self.rt.settings.public_origin, uow.now)}

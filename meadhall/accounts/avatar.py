"""The account's avatar (OpenAPI: setAvatar, removeAvatar). The generic upload, check and serve flow is in
`meadhall.files.slots`; the account says where the file row belongs and what changes when it is set."""

from __future__ import annotations

from typing import Any

from meadhall.accounts import queries
from meadhall.accounts.events import notify_user_update
from meadhall.accounts.profile import public_change
from meadhall.accounts.queries import UserRow
from meadhall.accounts.views import user_private
from meadhall.db.uow import UnitOfWork
from meadhall.files.slots import Slot
from meadhall.runtime import Runtime


class Avatar:
    """The signed-in user's own avatar: served to any signed-in user (docs/files.md)."""

    slot = Slot("user.avatar", "avatar", "avatar_max_bytes")

    def __init__(self, rt: Runtime, user_id: int) -> None:
        self.rt, self.user_id = rt, user_id

    async def load(self, uow: UnitOfWork) -> UserRow:
        row = await queries.select_user(uow.conn, self.user_id)
        assert row is not None
        return row

    def current(self, target: UserRow) -> int | None:
        return target["avatar_file_id"]

    def placement(self, target: UserRow) -> dict[str, Any]:
        return {"owner_id": self.user_id}

    async def apply(self, uow: UnitOfWork, target: UserRow, new_id: int | None, old_id: int | None
                    ) -> dict[str, Any]:
        if new_id == old_id:
            return {"user": user_private(target, self.rt.keys)}
        await queries.update_user(uow.conn, self.user_id, {"avatar_file_id": new_id})
        row = await queries.select_user(uow.conn, self.user_id)
        assert row is not None
        # As a profile change: the public summary changed, so what else announces such a change (the
        # members of the user's guilds, registered by guilds) runs too.
        uow.emit(notify_user_update(row, self.rt.keys))
        for hook in public_change:
            await hook(uow, row)
        return {"user": user_private(row, self.rt.keys)}

"""A webhook's avatar (OpenAPI: setWebhookAvatar, removeWebhookAvatar): an image slot (meadhall.files.slots)
held by the webhook, served like a user avatar to any signed-in user, under the `avatar_max_bytes` limit.
Messages keep the avatar they were sent with (their snapshot names the file)."""

from __future__ import annotations

from typing import Any

from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.db.uow import UnitOfWork
from meadhall.files.slots import Slot
from meadhall.messages.webhooks import queries
from meadhall.messages.webhooks.service import Managed, access_webhook
from meadhall.messages.webhooks.views import webhook_view

OWNER = "webhook"


class WebhookAvatar:
    # No channel_id on the file: a webhook moves between rooms, and a room's deletion takes its files.
    slot = Slot(OWNER, "avatar", "avatar_max_bytes")

    def __init__(self, principal: Principal, raw_id: str) -> None:
        self.principal, self.raw_id = principal, raw_id

    async def load(self, uow: UnitOfWork) -> Managed:
        return await access_webhook(uow, self.principal, self.raw_id)

    def current(self, target: Managed) -> int | None:
        return target.row["avatar_file_id"]

    def placement(self, target: Managed) -> dict[str, Any]:
        return {"guild_id": target.row["guild_id"], "owner_id": target.row["id"]}

    async def apply(self, uow: UnitOfWork, target: Managed, new_id: int | None, old_id: int | None
                    ) -> dict[str, Any]:
        row = target.row
        if new_id == old_id:
            return {"webhook": webhook_view(row)}
        await queries.update_webhook(uow.conn, row["guild_id"], row["id"], {"avatar_file_id": new_id})
        await record(uow, "webhook.avatar_update", actor_id=self.principal.user_id, target_type="webhook",
                     target_id=row["id"], guild_id=row["guild_id"],
                     data={"name": row["name"], "changes": {"avatar": [None if old_id is None else str(old_id),
                                                  None if new_id is None else str(new_id)]}})
        return {"webhook": webhook_view({**row, "avatar_file_id": new_id})}

"""Image slots: the generic flow behind every image holder. The holders live with their owners (the
avatar in `meadhall.accounts.avatar`; the guild's icon, banner and splash, a room's background and an
invitation's background in `meadhall.guilds`). Each answers POST (set or replace) and DELETE (remove)
with its parent object.

One flow for all of them: the holder is loaded and authorised before the body is read (404 / 403 / 422
come first), the image is received under its media limit (413) and checked (415), and in one transaction
the holder is authorised again, the new file row written, the holder pointed at it and the old file row
deleted; the old content goes once that transaction has committed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from meadhall.db.uow import UnitOfWork
from meadhall.files import queries
from meadhall.files.checks import check_image, image_type_allowed
from meadhall.files.cleanup import drop_files
from meadhall.files.intake import kept_until_commit, take_upload
from meadhall.files.limits import media_limits
from meadhall.files.upload import OpenUpload
from meadhall.runtime import Runtime


@dataclass(frozen=True)
class Slot:
    owner: str  # files.owner
    purpose: str  # who may fetch it: the rules of meadhall.files.access (docs/files.md)
    limit: str  # key of the media limits (docs/reference/limits.md)


# What a holder loads and then works on: the account row, the guild's or room's context, the invitation row.
Target = TypeVar("Target")


class Holder(Protocol[Target]):
    """An owner's image holder; `load` gives the target that the other methods take."""

    slot: Slot

    async def load(self, uow: UnitOfWork) -> Target:
        """Load and authorise the holder (404 / 403 / 422)."""

    def current(self, target: Target) -> int | None:
        """The id of the image file the holder points at now."""

    def placement(self, target: Target) -> dict[str, Any]:
        """The file row's placement columns (guild_id, channel_id, owner_id, owner_key) besides `owner`."""

    async def apply(self, uow: UnitOfWork, target: Target, new_id: int | None, old_id: int | None
                    ) -> dict[str, Any]:
        """Point the holder at `new_id`, audit and emit when it changed; return the response body."""


async def set_image(rt: Runtime, holder: Holder[Target], upload: OpenUpload, *, uploader_id: int) -> dict[str, Any]:
    """Set or replace the holder's image from `upload` (opened once the holder is authorised)."""
    async with rt.read() as uow:
        await holder.load(uow)
        limit = (await media_limits(uow.conn))[holder.slot.limit]
    new = await take_upload(rt, upload, limit=limit, purpose=holder.slot.purpose, uploader_id=uploader_id,
                            check=check_image, accept=image_type_allowed)
    async with kept_until_commit(rt, new), rt.uow() as uow:
        target = await holder.load(uow)
        old = holder.current(target)
        await queries.insert_file(uow.conn, new.row(uow.now, owner=holder.slot.owner, **holder.placement(target)))
        body = await holder.apply(uow, target, new.id, old)
        await drop_files(uow, rt.files, [old])
    return body


async def remove_image(rt: Runtime, holder: Holder[Target]) -> dict[str, Any]:
    """Remove the holder's image; its content goes once the change has committed."""
    async with rt.uow() as uow:
        target = await holder.load(uow)
        old = holder.current(target)
        body = await holder.apply(uow, target, None, old)
        await drop_files(uow, rt.files, [old])
    return body

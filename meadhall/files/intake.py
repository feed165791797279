"""From an upload stream to stored content: receive it, check it, put it in place under a new id.

The content is in place before its row is written, so a committed row always has content; when the
transaction that writes the row fails, `kept_until_commit` removes the content again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from meadhall.files.checks import Checked
from meadhall.files.queries import FileRow
from meadhall.files.upload import OpenUpload, Received, receive_file
from meadhall.runtime import Runtime

Check = Callable[[Runtime, Any, str], Awaitable[Checked]]


@dataclass(frozen=True)
class NewFile:
    id: int
    purpose: str
    uploader_id: int
    received: Received
    checked: Checked

    def row(self, now: datetime, **placement: Any) -> FileRow:
        """The files row; `placement` sets guild_id, channel_id and the owner columns."""
        row: FileRow = {
            "id": self.id,
            "purpose": self.purpose,
            "uploader_id": self.uploader_id,
            "original_name": self.received.filename,
            "content_type": self.checked.content_type,
            "size": self.received.size if self.checked.stored is None else self.checked.stored.size,
            "sha256": self.received.spool.sha256 if self.checked.stored is None else self.checked.stored.sha256,
            "meta": self.checked.meta,
            "guild_id": None,
            "channel_id": None,
            "message_id": None,
            "position": None,
            "owner": None,
            "owner_id": None,
            "owner_key": None,
            "created_at": now,
        }
        row.update(placement)  # type: ignore[typeddict-item]  # keys checked by insert_file's columns
        return row


async def take_upload(rt: Runtime, open_upload: OpenUpload, *, limit: int, purpose: str, uploader_id: int,
                      check: Check, accept: Callable[[str], bool] | None = None) -> NewFile:
    """Receive (413 / 422; 415 at once for a declared type `accept` refuses), check (415) and store the
    upload under a new id."""
    received = await receive_file(open_upload, rt.files, limit, accept)
    try:
        checked = await check(rt, received.spool, received.declared_type)
        file_id = rt.ids.next()
        await rt.files.put(file_id, received.spool)
    except BaseException:
        received.spool.discard()
        raise
    return NewFile(file_id, purpose, uploader_id, received, checked)


@asynccontextmanager
async def kept_until_commit(rt: Runtime, new: NewFile) -> AsyncIterator[None]:
    """Wrap the unit of work that writes the row: if it does not commit, the content goes."""
    try:
        yield
    except BaseException:
        await rt.files.delete(new.id)
        raise

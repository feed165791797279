"""Files of an export taken in as uploads are (docs/files.md): the same receive, check and store path as an
upload over HTTP (files/intake.py), fed from a local file the importer has already confined to the export's
folders. A refused file is a count, never an error of the import.

The content is stored before its row exists; the rows are written in the import's transaction, and when that
transaction does not commit the writer removes the stored content again (BatchWriter.discard_stored), so a
failed import leaves no content behind either.
"""

from __future__ import annotations

import mimetypes
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meadhall.core.errors import AppError
from meadhall.db.uow import UnitOfWork
from meadhall.files.checks import check_attachment, check_image, image_type_allowed
from meadhall.files.intake import NewFile, take_upload
from meadhall.files.names import OCTET_STREAM
from meadhall.files.queries import insert_file
from meadhall.runtime import Runtime

_READ = 1 << 16


@dataclass
class Pending:
    new: NewFile
    placement: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _LocalUpload:
    path: Path
    filename: str
    content_type: str

    @property
    def chunks(self) -> AsyncIterator[bytes]:
        return _read(self.path)


async def _read(path: Path) -> AsyncIterator[bytes]:
    with path.open("rb") as handle:
        while chunk := handle.read(_READ):
            yield chunk


def declared_type(name: str) -> str:
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed or OCTET_STREAM


async def take_local_file(rt: Runtime, path: Path, name: str, *, purpose: str, limit: int
                          ) -> tuple[Pending | None, str | None]:
    """(the stored file, None), or (None, `too_large` / `refused_type`). `purpose` `attachment` is checked as
    an attachment; `image` as an emoji or icon is (PNG, JPEG, WebP or GIF, decoded)."""
    image = purpose != "attachment"
    declared = declared_type(name)
    if image and not image_type_allowed(declared):
        return None, "refused_type"

    async def open_upload(_limit: int) -> _LocalUpload:
        return _LocalUpload(path, name, declared)

    try:
        new = await take_upload(rt, open_upload, limit=limit, purpose="avatar" if image else "attachment",
                                uploader_id=0, check=check_image if image else check_attachment)
    except AppError as err:
        return None, "too_large" if err.code == "file.too_large" else "refused_type"
    return Pending(new), None


async def insert_rows(uow: UnitOfWork, pending: Sequence[Pending]) -> None:
    for item in pending:
        await insert_file(uow.conn, item.new.row(uow.now, **item.placement))

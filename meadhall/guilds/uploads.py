"""Uploads of a guild's collections (custom emojis, sounds, the cosmetics gallery; docs/customisation.md):
the file part with the form fields sent beside it (`name`, `kind`, ...).

The flow of each: the guild is loaded and the permission checked before the body is read (404 / 403
first), the file is received under its media limit (413) and checked (415), then the form fields are
validated (422) and, in one transaction holding the guild's row lock, the permission is checked again,
the count and the name's uniqueness are decided (409) and the rows are written. Content stored for an
upload whose transaction does not commit is removed again (`files.intake.kept_until_commit`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import validation_error
from meadhall.core.text import check_single_line
from meadhall.files.intake import Check, NewFile, take_upload
from meadhall.files.limits import media_limits
from meadhall.files.upload import IncomingFile, OpenUpload
from meadhall.guilds.access import access_guild, require
from meadhall.runtime import Runtime


@dataclass(frozen=True)
class Incoming:
    new: NewFile
    fields: dict[str, str]


async def receive_item(rt: Runtime, principal: Principal, raw_guild_id: str, permission: perms.Permission,
                       upload: OpenUpload, *, limit: str, purpose: str, check: Check,
                       accept: Callable[[str], bool]) -> Incoming:
    """Authorise (404 / 403), then receive and check the file under the media limit `limit` (413 / 415)."""
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, permission)
        max_bytes = (await media_limits(uow.conn))[limit]
    opened: list[IncomingFile] = []

    async def open_upload(size: int) -> IncomingFile:
        part = await upload(size)
        opened.append(part)
        return part

    new = await take_upload(rt, open_upload, limit=max_bytes, purpose=purpose, uploader_id=principal.user_id,
                            check=check, accept=accept)
    # Read after the whole body: fields sent after the file part are known only now.
    fields = getattr(opened[0], "fields", None) if opened else None
    return Incoming(new, dict(fields) if isinstance(fields, dict) else {})


def text_field(fields: dict[str, str], name: str, *, min_length: int, max_length: int,
               pattern: re.Pattern[str] | None = None, required: bool = True) -> str | None:
    """A form field as its rule says: present (when required), trimmed, within its length and pattern."""
    raw = fields.get(name)
    if raw is None or raw.strip() == "":
        if required:
            raise validation_error(name, "is required")
        return None
    value = raw.strip()
    if not min_length <= len(value) <= max_length:
        raise validation_error(name, f"must be {min_length} to {max_length} characters")
    if pattern is not None and not pattern.fullmatch(value):
        raise validation_error(name, f"must match {pattern.pattern}")
    try:
        return check_single_line(value)
    except ValueError as exc:
        raise validation_error(name, str(exc)) from None


def choice_field(fields: dict[str, str], name: str, choices: tuple[str, ...], *, required: bool = True) -> str | None:
    raw = fields.get(name)
    if raw is None or raw == "":
        if required:
            raise validation_error(name, "is required")
        return None
    if raw not in choices:
        raise validation_error(name, f"must be one of {', '.join(choices)}")
    return raw


def upload_body(file_description: str, content_types: tuple[str, ...], properties: dict[str, Any],
                required: list[str]) -> dict[str, Any]:
    """The `requestBody` of a collection upload: the `file` part and its form fields (the routes read the
    body themselves, streamed, so FastAPI sees no body parameter)."""
    return {"requestBody": {"required": True, "content": {"multipart/form-data": {
        "schema": {
            "type": "object",
            "required": ["file", *required],
            "properties": {"file": {"type": "string", "format": "binary", "description": file_description},
                           **properties},
        },
        "encoding": {"file": {"contentType": ", ".join(content_types)}},
    }}}}

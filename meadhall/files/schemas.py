"""Models of the file routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from meadhall.files.sniff import WEB_IMAGES


class File(BaseModel):
    id: str
    purpose: str
    original_name: str
    content_type: str
    size: int
    sha256: str
    metadata: dict[str, Any]
    url: str
    uploader_id: str | None
    bound: bool
    created_at: str


class FileResponse(BaseModel):
    file: File


# The error answers of every upload route, whoever holds the file.
UPLOAD_ERRORS = ("file.too_large", "file.unsupported_type", "auth.origin_mismatch")


def _multipart_body(description: str, content_types: tuple[str, ...] = ()) -> dict[str, Any]:
    """The `requestBody` of an upload route. Upload routes read the body themselves (streamed, never
    buffered), so FastAPI does not see a body parameter: the multipart body is described here."""
    media: dict[str, Any] = {
        "schema": {
            "type": "object",
            "required": ["file"],
            "properties": {"file": {"type": "string", "format": "binary", "description": description}},
        }
    }
    if content_types:
        media["encoding"] = {"file": {"contentType": ", ".join(content_types)}}
    return {"requestBody": {"required": True, "content": {"multipart/form-data": media}}}


UPLOAD_BODY = _multipart_body("The file; its part Content-Type is the declared type")
# The image slots (avatar, icon, banner, splash, backgrounds) take only these types, declared on the part
# and confirmed by decoding the image (docs/files.md).
IMAGE_UPLOAD_BODY = _multipart_body("A PNG, JPEG, WebP or GIF image, declared as such", WEB_IMAGES)

CONTENT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "The content (no body for HEAD)",
          "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}}},
    304: {"description": "Not modified: the If-None-Match tag is the current ETag"},
}

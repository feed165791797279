"""Serialise file rows into the File object (OpenAPI: getFile)."""

from __future__ import annotations

from typing import Any

from meadhall.core.clock import iso
from meadhall.files.queries import FileRow


def file_url(file_id: int | str) -> str:
    return f"/files/{file_id}"


def file_view(row: FileRow) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "purpose": row["purpose"],
        "original_name": row["original_name"],
        "content_type": row["content_type"],
        "size": int(row["size"]),
        "sha256": row["sha256"],
        "metadata": dict(row["meta"] or {}),
        "url": file_url(row["id"]),
        "uploader_id": None if row["uploader_id"] is None else str(row["uploader_id"]),
        "bound": row["owner"] is not None,
        "created_at": iso(row["created_at"]),
    }

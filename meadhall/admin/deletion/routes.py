"""Routes of instance administration: deletion (docs/admin.md)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["instance"])

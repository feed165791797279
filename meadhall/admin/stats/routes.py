"""Routes of instance administration: stats (docs/admin.md)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["instance"])

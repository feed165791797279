"""Routes of instance administration: settings (docs/admin.md)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["instance"])

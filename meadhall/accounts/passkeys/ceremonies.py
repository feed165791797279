"""Passkey ceremonies: the challenge of one registration or sign-in, kept 5 minutes in the shared store
(Redis when configured, so that a ceremony started on one node finishes on another) and taken, read and
deleted in one atomic step, by every verify attempt, accepted or refused: a ceremony is never used twice."""

from __future__ import annotations

import secrets
from typing import Any

from meadhall.core.errors import AppError
from meadhall.runtime import Runtime

LIFE = 5 * 60
TIMEOUT_MS = LIFE * 1000


def _key(ceremony_id: str) -> str:
    return f"passkey:ceremony:{ceremony_id}"


async def start(rt: Runtime, data: dict[str, Any]) -> str:
    """Store a ceremony; its id is a random token (guessing one gains nothing: it is only the key)."""
    ceremony_id = secrets.token_urlsafe(24)
    await rt.store.set(_key(ceremony_id), data, LIFE, rt.now_ts())
    return ceremony_id


async def take(rt: Runtime, ceremony_id: str, kind: str) -> dict[str, Any]:
    """Consume the ceremony; 401 `auth.ceremony_invalid` when unknown, expired, used or of another kind."""
    data = await rt.store.take(_key(ceremony_id), rt.now_ts()) if len(ceremony_id) <= 64 else None
    if not isinstance(data, dict) or data.get("kind") != kind:
        raise AppError("auth.ceremony_invalid")
    return data

"""FastAPI dependencies for the caller's identity and the `global` rate-limit bucket."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from meadhall.api.client import client_ip
from meadhall.api.limits import take
from meadhall.core.errors import AppError


@dataclass(frozen=True)
class Principal:
    user_id: int
    session_id: int
    is_instance_admin: bool
    via_cookie: bool


async def optional_principal(request: Request) -> Principal | None:
    """The signed-in caller, or None. Resolved once per request (FastAPI caches dependencies)."""
    cached = request.scope.get("state", {}).get("principal", ...)
    if cached is not ...:
        return cached
    resolver = getattr(request.app.state, "resolve_principal", None)
    principal = await resolver(request) if resolver else None
    request.scope.setdefault("state", {})["principal"] = principal
    return principal


async def require_session(request: Request) -> Principal:
    principal = await optional_principal(request)
    if principal is None:
        raise AppError("auth.unauthorized")
    return principal


async def global_limit(request: Request) -> None:
    """The `global` bucket on every /api/v1 route, keyed by user, or by address without a session."""
    principal = await optional_principal(request)
    key = f"u{principal.user_id}" if principal else f"ip{client_ip(request)}"
    await take(request, "global", key)

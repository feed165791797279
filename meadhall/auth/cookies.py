"""The session cookie `__Host-session` (docs/architecture.md)."""

from __future__ import annotations

from meadhall.config import Settings

COOKIE_NAME = "__Host-session"

# `Secure` always (docs/architecture.md): browsers refuse a `__Host-` cookie without it, and they accept `Secure`
# cookies from plain-HTTP loopback origins, so `make run` at http://localhost:8000 signs in too.
_ATTRIBUTES = "Path=/; HttpOnly; Secure; SameSite=Lax"


def session_cookie(settings: Settings, token: str) -> str:
    return f"{COOKIE_NAME}={token}; {_ATTRIBUTES}; Max-Age={settings.SESSION_TTL_DAYS * 86400}"


def cleared_cookie(settings: Settings) -> str:
    return f"{COOKIE_NAME}=; {_ATTRIBUTES}; Max-Age=0"

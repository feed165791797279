"""The session cookie `__Host-session` (API.md 0.9)."""

from __future__ import annotations

from meadhall.config import Settings

COOKIE_NAME = "__Host-session"


def session_cookie(settings: Settings, token: str) -> str:
    """Set-Cookie value; `Secure` only with TLS (browsers accept `__Host-` without it on localhost)."""
    value = f"{COOKIE_NAME}={token}; Path=/; HttpOnly; SameSite=Lax; Max-Age={settings.SESSION_TTL_DAYS * 86400}"
    return value + "; Secure" if settings.TLS_ENABLED else value


def cleared_cookie(settings: Settings) -> str:
    value = f"{COOKIE_NAME}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0"
    return value + "; Secure" if settings.TLS_ENABLED else value

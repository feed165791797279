"""The client's address: from the socket, or from `X-Forwarded-For` only when `TRUST_PROXY` is on."""

from __future__ import annotations

from starlette.requests import HTTPConnection


def client_ip(conn: HTTPConnection) -> str:
    settings = conn.app.state.runtime.settings
    if settings.TRUST_PROXY:
        forwarded = conn.headers.get("x-forwarded-for")
        if forwarded:
            # The trusted proxy appends the address it saw; entries left of it are client-supplied.
            return forwarded.split(",")[-1].strip()
    return conn.client.host if conn.client else "unknown"

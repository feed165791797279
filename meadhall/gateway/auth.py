"""Who a gateway connection belongs to: the token of IDENTIFY/RESUME, or the session cookie read at the
handshake (docs/architecture.md, docs/gateway.md). Unlike REST requests, the gateway never rotates the token (a rotated token
could not reach the client) and leaves the activity refresh to heartbeats."""

from __future__ import annotations

from dataclasses import dataclass

from meadhall.auth.sessions import live_session
from meadhall.core.crypto import token_digest
from meadhall.core.errors import AppError
from meadhall.runtime import Runtime


@dataclass(frozen=True)
class GatewayIdentity:
    user_id: int
    session_id: int
    is_instance_admin: bool


class Refused(Exception):
    """The token cannot open a gateway session; `reason` is INVALID_SESSION's (`unauthorized`/`banned`)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def identify(rt: Runtime, token: str | None) -> GatewayIdentity:
    if not token:
        raise Refused("unauthorized")
    try:
        row = await live_session(rt, token_digest(token), rt.clock.now())
    except AppError as err:
        raise Refused("banned" if err.code == "user.banned" else "unauthorized") from None
    return GatewayIdentity(row["user_id"], row["id"], bool(row["is_instance_admin"]))

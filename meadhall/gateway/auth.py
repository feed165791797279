"""Who a gateway connection belongs to: the token of IDENTIFY/RESUME, or the session cookie read at the
handshake (API.md 0.9, 4.1). Unlike REST requests, the gateway never rotates the token (a rotated token
could not reach the client) and leaves the activity refresh to heartbeats."""

from __future__ import annotations

from dataclasses import dataclass

from meadhall.accounts import queries
from meadhall.accounts.sessions import ttl
from meadhall.core.clock import as_utc
from meadhall.core.crypto import token_digest
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
    now = rt.clock.now()
    async with rt.read() as uow:
        row = await queries.session_with_user_by_digest(uow.conn, token_digest(token), now)
    if row is None or row["deleted_at"] is not None:
        raise Refused("unauthorized")
    last_used = as_utc(row["last_used_at"])
    if last_used is None or last_used + ttl(rt) <= now:
        raise Refused("unauthorized")
    if row["banned_at"] is not None:
        # As on REST (API.md 0.9): the banned account's session is deleted.
        async with rt.uow() as uow:
            await queries.delete_session(uow.conn, row["id"])
        raise Refused("banned")
    return GatewayIdentity(row["user_id"], row["id"], bool(row["is_instance_admin"]))

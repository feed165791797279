"""Security events (OpenAPI: listSecurityEvents): written in the caller's transaction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from meadhall.auth import queries
from meadhall.db.uow import UnitOfWork


@dataclass(frozen=True)
class Client:
    """Where a request came from, for sessions and security events."""

    ip: str
    user_agent: str | None


CLI_CLIENT = Client(ip="cli", user_agent="meadhall-cli")


async def record_security(
    uow: UnitOfWork, type_: str, user_id: int | None, client: Client, data: dict[str, Any] | None = None
) -> None:
    await queries.insert_security_event(
        uow.conn,
        {
            "id": uow.next_id(),
            "user_id": user_id,
            "type": type_,
            "ip": client.ip,
            "user_agent": (client.user_agent or None) and client.user_agent[:512],
            "data": data or {},
            "created_at": uow.now,
        },
    )

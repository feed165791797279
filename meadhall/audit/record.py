"""Write audit entries inside the caller's unit of work: the entry commits with the change it records
or not at all (docs/architecture.md)."""

from __future__ import annotations

from typing import Any

from meadhall.db.schema import audit_log
from meadhall.db.uow import UnitOfWork


async def record(
    uow: UnitOfWork,
    action: str,
    *,
    actor_id: int | None,
    target_type: str | None = None,
    target_id: int | None = None,
    guild_id: int | None = None,
    reason: str | None = None,
    data: dict[str, Any] | None = None,
) -> int:
    entry_id = uow.next_id()
    await uow.conn.execute(
        audit_log.insert().values(
            id=entry_id,
            action=action,
            guild_id=guild_id,
            actor_id=actor_id,
            target_type=target_type,
            target_id=target_id,
            reason=reason,
            data=data or {},
            created_at=uow.now,
        )
    )
    return entry_id

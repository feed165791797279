"""Write audit entries inside the caller's unit of work: the entry commits with the change it records
or not at all (docs/architecture.md), and links into its hash chain (docs/audit.md)."""

from __future__ import annotations

from typing import Any

from meadhall.audit.chain import advance_head, chain_key, entry_mac, lock_head, next_entry_id, stored_form
from meadhall.audit.queries import insert_audit_entry
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
    # The head is locked first and the id made after: a concurrent writer of the same chain waits here,
    # and the entry's id then sorts after the one it links to.
    if uow.audit_key is None:
        raise RuntimeError("audit entries need the chain key: write them in the runtime's unit of work")
    head = await lock_head(uow.conn, chain_key(guild_id))
    prev_hash = head.last_hash
    entry_id = await next_entry_id(uow, head.last_id)
    entry: dict[str, Any] = {
        "id": entry_id,
        "action": action,
        "guild_id": guild_id,
        "actor_id": actor_id,
        "target_type": target_type,
        "target_id": target_id,
        "reason": reason,
        "data": stored_form(data or {}),
        "created_at": uow.now,
    }
    digest = entry_mac(uow.audit_key, entry, prev_hash)
    await insert_audit_entry(uow.conn, {**entry, "prev_hash": prev_hash, "hash": digest})
    await advance_head(uow.conn, uow.audit_key, head, entry_id, digest)
    return entry_id

"""Instance settings (docs/admin.md, "Media limits"): the five media limits every upload obeys. The row
is read on every upload and every GET /meta (files/limits.py), so a change holds on every node at once."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from meadhall.admin.access import require_admin
from meadhall.audit.diff import changes
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core.clock import iso
from meadhall.db.dialect import transaction_lock
from meadhall.db.uow import UnitOfWork
from meadhall.files.limits import media_limits, write_media_limits
from meadhall.files.queries import select_instance_settings_updated_at
from meadhall.runtime import Runtime

# `updated_at` of settings never written: the epoch, so that the field is always a timestamp (docs/admin.md).
NEVER_WRITTEN = datetime(1970, 1, 1, tzinfo=UTC)
SETTINGS_LOCK = 0x73657474  # "sett": the transaction lock of settings writers (db/dialect/)


async def _settings_view(uow: UnitOfWork) -> dict[str, Any]:
    limits = await media_limits(uow.conn)
    updated_at = await select_instance_settings_updated_at(uow.conn)
    return {"settings": {"media_limits": limits, "updated_at": iso(updated_at or NEVER_WRITTEN)}}


async def access_instance_settings(rt: Runtime, principal: Principal) -> dict[str, Any]:
    require_admin(principal)
    async with rt.read() as uow:
        return await _settings_view(uow)


async def do_update_instance_settings(rt: Runtime, principal: Principal, limits: dict[str, int]) -> dict[str, Any]:
    """Write the given media limits over those in force; audited with the old and new value of each one
    that changed. A request that changes nothing writes nothing."""
    require_admin(principal)
    async with rt.uow() as uow:
        # Two administrators writing different limits at once: the second reads what the first wrote.
        await transaction_lock(uow.conn, SETTINGS_LOCK)
        current = await media_limits(uow.conn)
        diff = changes(current, limits)
        if diff:
            await write_media_limits(uow.conn, {**current, **limits}, uow.now)
            await record(uow, "instance.settings_update", actor_id=principal.user_id, target_type="settings",
                         data={"changes": {f"media_limits.{k}": v for k, v in diff.items()}})
        return await _settings_view(uow)

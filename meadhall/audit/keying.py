"""Key the chains written before the keyed chain (docs/audit.md, "Keyed hashes"): the runtime calls
`key_older_chains` at every start, after the migrations, so that every chain head carries its marker and
HMAC from the first start after the upgrade on, and a head without them is a finding.

A head is keyed only while no head of the instance carries an HMAC: that is the database as the upgrade
left it. Once one does, an unmarked head was stripped (or written around `record()`), and keying it would
bless whatever its chain was rewritten to; it is left for audit-verify to report."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import structlog
from sqlalchemy.ext.asyncio import AsyncEngine

from meadhall.audit.chain import head_mac
from meadhall.audit.queries import (
    select_any_head_with_mac,
    select_any_head_without_mac,
    select_unmarked_heads,
    update_unmarked_heads,
)
from meadhall.db.uow import UnitOfWork

log = structlog.get_logger("meadhall.audit")

WARN_NAMES = 20  # chain keys named in the warning; the count says how many there are


async def key_older_chains(engine: AsyncEngine, begin: Callable[[], AbstractAsyncContextManager[UnitOfWork]]
                           ) -> list[str]:
    """Give each unmarked head its marker (`keyed_after` = its last entry: its entries so far keep their
    plain hashes) and its HMAC, in one write transaction opened by `begin` (the runtime's unit of work,
    which holds the key). Idempotent; returns the keys of the chains keyed."""
    async with engine.connect() as conn:
        # The whole cost of a start with nothing to key: one look for a head without an HMAC.
        if not await select_any_head_without_mac(conn):
            return []
    async with begin() as uow:
        return await _key_unmarked_heads(uow)


async def _key_unmarked_heads(uow: UnitOfWork) -> list[str]:
    assert uow.audit_key is not None, "the runtime's unit of work carries the chain key"
    unmarked = await select_unmarked_heads(uow.conn)
    if not unmarked:
        return []
    if await select_any_head_with_mac(uow.conn):
        log.warning("audit chain heads without marker and HMAC since the upgrade: not keyed, "
                    "meadhall audit-verify reports them", count=len(unmarked),
                    chains=[row["chain_key"] for row in unmarked[:WARN_NAMES]])
        return []
    await update_unmarked_heads(uow.conn, [
        {"b_key": row["chain_key"], "b_last_id": row["last_id"], "b_keyed_after": row["last_id"],
         "b_mac": head_mac(uow.audit_key, row["chain_key"], row["last_id"], row["last_hash"], row["last_id"])}
        for row in unmarked])
    keys = [row["chain_key"] for row in unmarked]
    log.info("audit chains keyed", count=len(keys))
    return keys

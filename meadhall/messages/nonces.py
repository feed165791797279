"""Repeated sends (docs/mentions.md, "Repeated sends"): a `nonce` is a key (room, author, nonce) written in the
send's own transaction, so a retry within 5 minutes answers the first message (200) whichever node took the first
attempt and whenever that node died after its commit; a send that fails (422, 429, a crash before the commit)
leaves no key. After 5 minutes, or once the first message is deleted, the next send with the nonce takes the key
over and is a new message (201).

Keys older than the window are deleted lazily: the first send with a nonce in each minute on each node deletes them
in its transaction (one index range), so the table holds about the last six minutes of nonces."""

from __future__ import annotations

import weakref
from datetime import timedelta
from typing import Any

from meadhall.core.clock import as_utc
from meadhall.db.uow import UnitOfWork
from meadhall.messages import queries
from meadhall.messages.rows import MessageRow

NONCE_WINDOW = timedelta(seconds=300)
SWEEP_EVERY = timedelta(seconds=60)
# Enough for every interleaving: a key read after a failed insert is either fresh (answered), or expired or
# orphaned (taken over, or found taken over by another send, which is then fresh).
_ROUNDS = 4

_last_sweep: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


async def claim_nonce(owner: Any, uow: UnitOfWork, channel_id: int, author_id: int, nonce: str, message_id: int
                      ) -> MessageRow | None:
    """None when this send holds the key now (its message, `message_id`, must be written in this transaction);
    else the first message, to answer with. `owner` is what the sweep's period is kept for (the runtime)."""
    await _sweep(owner, uow)
    for _ in range(_ROUNDS):
        if await queries.insert_nonce(uow.conn, channel_id, author_id, nonce, message_id, uow.now):
            return None
        found = await queries.select_nonce(uow.conn, channel_id, author_id, nonce)
        if found is None:  # swept since the insert looked: try again
            continue
        seen_id, created_at = found
        created = as_utc(created_at)
        if created is not None and created > uow.now - NONCE_WINDOW:
            first = await queries.select_message(uow.conn, channel_id, seen_id)
            if first is not None:
                return first
        if await queries.update_nonce_taken_over(uow.conn, channel_id, author_id, nonce, seen_id, message_id,
                                                 uow.now):
            return None
    raise RuntimeError("nonce key kept changing under this send")


async def _sweep(owner: Any, uow: UnitOfWork) -> None:
    last = _last_sweep.get(owner)
    if last is not None and uow.now - last < SWEEP_EVERY:
        return
    _last_sweep[owner] = uow.now
    await queries.delete_nonces_before(uow.conn, uow.now - NONCE_WINDOW)

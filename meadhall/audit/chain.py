"""The tamper-evident audit chain (docs/audit.md): every entry carries the hash of its predecessor in its
chain (one chain per guild, one for instance-level entries) and its own hash over a canonical encoding of
its fields; a head row per chain holds the last entry. Editing an entry breaks its hash, removing one breaks
the link of its successor or leaves the head pointing at nothing.

The hash is keyed: HMAC-SHA256 under a key derived from SECRET_KEY, so that someone who can write to the
database but does not hold the key cannot recompute the chain after rewriting it. Entries written before
the keyed chain (plain SHA-256) stay verifiable: each head records after which entry its chain is keyed
(`keyed_after`: 0 for a chain begun since; for an older chain its last entry when the first start after
the upgrade keyed its head, keying.py), and carries an HMAC of itself, so that the marker cannot be moved
or removed to pass keyed entries off as plain ones.

Hashing is pure (the 0017 migration backfills with a frozen copy of the plain rule: a migration sits below
this layer); the head lock runs in the writer's transaction."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.audit.queries import (
    select_audit_entries_after,
    select_chain_heads,
    update_chain_head,
    upsert_chain_head,
)
from meadhall.core.clock import as_utc, iso
from meadhall.core.ids import id_timestamp_ms, sid
from meadhall.db.uow import UnitOfWork

INSTANCE_CHAIN = "instance"
VERIFY_BATCH = 1000


def chain_key(guild_id: int | None) -> str:
    return INSTANCE_CHAIN if guild_id is None else f"guild:{guild_id}"


def canonical(entry: Mapping[str, Any] | RowMapping, prev_hash: str | None) -> bytes:
    """The bytes an entry's hash covers: JSON with sorted keys, no spaces, ASCII only; ids as decimal
    strings; `created_at` as UTC with milliseconds and `Z`, so SQLite and PostgreSQL give the same bytes."""
    created_at: datetime = entry["created_at"]
    doc = {
        "prev_hash": prev_hash,
        "id": sid(entry["id"]),
        "action": entry["action"],
        "guild_id": sid(entry["guild_id"]),
        "actor_id": sid(entry["actor_id"]),
        "target_type": entry["target_type"],
        "target_id": sid(entry["target_id"]),
        "reason": entry["reason"],
        "data": entry["data"] if entry["data"] is not None else {},
        "created_at": iso(as_utc(created_at)),
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def entry_hash(entry: Mapping[str, Any] | RowMapping, prev_hash: str | None) -> str:
    """The plain rule of the entries written before the keyed chain (verification only)."""
    return hashlib.sha256(canonical(entry, prev_hash)).hexdigest()


def entry_mac(secret: bytes, entry: Mapping[str, Any] | RowMapping, prev_hash: str | None) -> str:
    """The keyed rule: HMAC-SHA256 of the same canonical bytes."""
    return hmac.new(secret, canonical(entry, prev_hash), hashlib.sha256).hexdigest()


def head_mac(secret: bytes, key: str, last_id: int, last_hash: str | None, keyed_after: int) -> str:
    """The head's own HMAC over what it states. Its canonical JSON has other keys than an entry's, so the
    two kinds of message never share bytes under the one key."""
    doc = {"chain": key, "last_id": sid(last_id), "last_hash": last_hash, "keyed_after": sid(keyed_after)}
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    return hmac.new(secret, raw, hashlib.sha256).hexdigest()


def stored_form(data: dict[str, Any]) -> dict[str, Any]:
    """`data` as the JSON column gives it back (keys become strings, tuples lists), so the hash computed
    at write time is the one recomputed from the stored row."""
    loaded: dict[str, Any] = json.loads(json.dumps(data))
    return loaded


# ---- writing: lock and advance the head of one chain ----------------------------------------------------


@dataclass(frozen=True)
class Head:
    """A chain's head as its writer locked it."""

    key: str
    last_id: int
    last_hash: str | None
    keyed_after: int | None  # None: an unmarked head (stripped, or written around record()), reported


async def lock_head(conn: AsyncConnection, key: str) -> Head:
    """Create the head row if missing (a new chain is keyed from its first entry: `keyed_after` 0), else
    lock it (PostgreSQL: the upsert takes the row lock until commit; SQLite: its single writer already
    serialises)."""
    row = await upsert_chain_head(conn, key)
    keyed_after = None if row.keyed_after is None else int(row.keyed_after)
    return Head(key, int(row.last_id), row.last_hash, keyed_after)


async def next_entry_id(uow: UnitOfWork, last_id: int) -> int:
    """An id above the chain's last one, so that id order is chain order. Another node's id made in the same
    millisecond (a higher node number) or a node whose clock runs ahead can be higher than ours: wait it out."""
    entry_id = uow.next_id()
    while entry_id <= last_id:
        behind_ms = id_timestamp_ms(last_id) - id_timestamp_ms(entry_id)
        await asyncio.sleep(max(behind_ms, 1) / 1000)
        entry_id = uow.next_id()
    return entry_id


async def advance_head(conn: AsyncConnection, secret: bytes, head: Head, last_id: int, last_hash: str) -> None:
    """Name the new last entry and sign the head again. An unmarked head stays unmarked: every head has its
    marker from the first start after the upgrade on (keying.py), so one without it was stripped, and
    marking it here would bless the plain entries put in place of keyed ones."""
    if head.keyed_after is None:
        await update_chain_head(conn, head.key, last_id=last_id, last_hash=last_hash)
        return
    await update_chain_head(conn, head.key, last_id=last_id, last_hash=last_hash,
                            mac=head_mac(secret, head.key, last_id, last_hash, head.keyed_after))


# ---- verifying ------------------------------------------------------------------------------------------


@dataclass
class _ChainState:
    head: RowMapping | None = None
    last_id: int | None = None
    last_hash: str | None = None
    finding: dict[str, str] | None = None

    def expects_keyed(self, entry_id: int) -> bool | None:
        """Whether this entry must carry the keyed hash: not before the chain's marker, always after it.
        None (either rule) for a chain without a head or without a marker, whose head is reported anyway
        (`head_missing`, `head_changed`)."""
        keyed_after = None if self.head is None else self.head["keyed_after"]
        return None if keyed_after is None else entry_id > keyed_after


@dataclass
class Verification:
    chains: int = 0
    entries: int = 0
    findings: list[dict[str, str]] = field(default_factory=list)

    def result(self) -> dict[str, Any]:
        if self.findings:
            return {"status": "tampered", "findings": self.findings}
        return {"status": "ok", "chains": self.chains, "entries": self.entries}


async def _entries(conn: AsyncConnection) -> AsyncIterator[RowMapping]:
    """Every entry in id order, fetched in keyset pages so memory stays flat on a large table."""
    after = -1
    while True:
        rows = await select_audit_entries_after(conn, after, VERIFY_BATCH)
        for row in rows:
            yield row
        if len(rows) < VERIFY_BATCH:
            return
        after = rows[-1]["id"]


def _hash_matches(state: _ChainState, secret: bytes, row: RowMapping) -> bool:
    if row["hash"] is None:
        return False
    keyed = state.expects_keyed(row["id"])
    plain_ok = keyed is not True and hmac.compare_digest(entry_hash(row, row["prev_hash"]), row["hash"])
    return plain_ok or (keyed is not False
                        and hmac.compare_digest(entry_mac(secret, row, row["prev_hash"]), row["hash"]))


def _check_entry(state: _ChainState, key: str, row: RowMapping, secret: bytes) -> None:
    """The first bad entry of a chain: a hash that does not match its fields under its chain's rule
    (`changed`: also a plain hash where the chain is keyed), or a predecessor link that does not name the
    previous stored entry (`removed_before`)."""
    if state.finding is None:
        problem = None
        if not _hash_matches(state, secret, row):
            problem = "changed"
        elif row["prev_hash"] != state.last_hash:
            problem = "removed_before"
        if problem is not None:
            state.finding = {"chain": key, "entry_id": str(row["id"]), "problem": problem}
    state.last_id, state.last_hash = row["id"], row["hash"]


def _head_mac_matches(head: RowMapping, secret: bytes) -> bool:
    """Every head carries its marker and its HMAC (keying.py gives them to the heads of older chains)."""
    if head["keyed_after"] is None or head["mac"] is None:
        return False
    expected = head_mac(secret, head["chain_key"], head["last_id"], head["last_hash"], head["keyed_after"])
    return hmac.compare_digest(expected, head["mac"])


def _check_head(state: _ChainState, key: str, secret: bytes) -> None:
    """The head names the last entry: a head beyond the last stored entry means entries were removed
    at the end; a head that names another entry, or none, means the chain was written around record();
    a head whose HMAC does not match was edited (moved back over removed entries, or its marker moved), and
    one without marker or HMAC was stripped of them."""
    head = state.head
    if state.finding is not None:
        return
    if head is None:
        state.finding = {"chain": key, "entry_id": str(state.last_id), "problem": "head_missing"}
    elif head["last_id"] != state.last_id or head["last_hash"] != state.last_hash:
        beyond = state.last_id is None or head["last_id"] > state.last_id
        state.finding = {"chain": key, "entry_id": str(head["last_id"]),
                         "problem": "removed_at_end" if beyond else "head_mismatch"}
    elif not _head_mac_matches(head, secret):
        state.finding = {"chain": key, "entry_id": str(head["last_id"]), "problem": "head_changed"}


async def verify_chains(conn: AsyncConnection, secret: bytes) -> Verification:
    """Walk every chain in id order, recompute each hash (plain up to its head's marker, keyed after it)
    and link, and compare the heads. `secret` is the chain's key (`Keys.audit_chain`)."""
    heads = {r["chain_key"]: r for r in await select_chain_heads(conn)}
    states = {key: _ChainState(head=head) for key, head in heads.items()}
    out = Verification()
    async for row in _entries(conn):
        key = chain_key(row["guild_id"])
        _check_entry(states.setdefault(key, _ChainState()), key, row, secret)
        out.entries += 1
    for key in sorted(states):
        _check_head(states[key], key, secret)
        finding = states[key].finding
        if finding is not None:
            out.findings.append(finding)
    out.chains = len(states)
    return out

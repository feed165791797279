"""Imported authors (docs/imported-authors.md): accounts that hold a source's history and can never sign in.

No email (the encryption of "" under the account's own associated data, as accounts encrypt addresses), an
email index that no address can have (a blind index is 64 hex digits; this one names the account), the password
hash "!" (no password hashes to it), no session, and `imported` set so that the API refuses to befriend, message
or invite them (403 `user.imported`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.validation import USERNAME
from meadhall.core.crypto import encrypt
from meadhall.core.text import norm
from meadhall.db.schema import users
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime

NO_PASSWORD = "!"  # noqa: S105 - not a password: no hash ever equals it, so no password verifies
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_.]+")
_LOOKUP_CHUNK = 500

# An imported author was never here: not online, not active in any period of the instance's statistics.
NEVER_SEEN = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class AuthorSpec:
    username: str  # the source's username, normalised here
    display_name: str


def base_username(source: str) -> str:
    """The source name in the username rule (2-32 of letters, digits, `_`, `.`): accents dropped, other
    characters become `_`, too short padded."""
    ascii_form = unicodedata.normalize("NFKD", source).encode("ascii", "ignore").decode()
    name = _NOT_ALLOWED.sub("_", ascii_form).strip("_") or "user"
    name = name[:32]
    return name if len(name) >= 2 else f"{name}_"


async def unique_usernames(conn: AsyncConnection, wanted: Sequence[str]) -> list[str]:
    """Each wanted name made free: as is, else with `_2`, `_3`, ... (cut to fit 32 characters)."""
    bases = [base_username(w) for w in wanted]
    taken: set[str] = set()
    for start in range(0, len(bases), _LOOKUP_CHUNK):
        chunk = list({norm(b) for b in bases[start:start + _LOOKUP_CHUNK]})
        taken.update(r[0] for r in await conn.execute(select(users.c.username_norm).where(
            users.c.username_norm.in_(chunk))))
    chosen: list[str] = []
    for base in bases:
        name, suffix = base, 1
        while norm(name) in taken or await _exists(conn, name):
            suffix += 1
            tail = f"_{suffix}"
            name = base[:32 - len(tail)] + tail
        taken.add(norm(name))
        chosen.append(name)
    return chosen


async def _exists(conn: AsyncConnection, name: str) -> bool:
    row = await conn.execute(select(users.c.id).where(users.c.username_norm == norm(name)))
    return row.first() is not None


def display_name(source: str, fallback: str) -> str:
    shown = " ".join(source.split())[:64]
    return shown or fallback


async def insert_imported_authors(rt: Runtime, uow: UnitOfWork, specs: Sequence[AuthorSpec]) -> list[int]:
    names = await unique_usernames(uow.conn, [s.username for s in specs])
    rows: list[dict[str, Any]] = []
    for spec, name in zip(specs, names, strict=True):
        user_id = uow.next_id()
        shown = display_name(spec.display_name, name)
        assert USERNAME.match(name)
        rows.append({
            "id": user_id, "username": name, "username_norm": norm(name),
            "email_enc": encrypt(rt.keys.email_enc, "", aad=str(user_id).encode()),
            "email_index": f"imported:{user_id}", "password_hash": NO_PASSWORD,
            "display_name": shown, "display_name_norm": norm(shown), "bio": "", "status": "invisible",
            "locale": "en", "timezone": "UTC", "totp_enabled": False, "is_instance_admin": False, "imported": True,
            "password_reset_required": False, "last_seen_at": NEVER_SEEN, "created_at": uow.now,
        })
    for start in range(0, len(rows), _LOOKUP_CHUNK):
        await uow.conn.execute(insert(users), rows[start:start + _LOOKUP_CHUNK])
    return [int(r["id"]) for r in rows]

"""Secrets at rest (docs/architecture.md, the OpenAPI document): after a full account life cycle, no column of the account
tables holds a session token, the password, a TOTP secret (enabled or pending), a backup code or the
email address in clear text; passwords and backup codes are argon2id hashes, tokens SHA-256 digests;
and the production hasher uses memory-hard parameters."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from argon2 import Type
from sqlalchemy import select

from meadhall.config import Settings
from meadhall.db.schema import backup_codes, security_events, sessions, users
from meadhall.runtime import Runtime
from tests.support.accounts import SETUP, STEP_UP, enable_2fa, login, next_code

EMAIL = "Secret.Keeper+Chat@Example.org"
PASSWORD = "Tr0ub4dor & three horses"
TABLES = (users, sessions, backup_codes, security_events)


def as_text(value: Any) -> str:
    """Every stored value as lower-case text; bytes are searched as raw bytes (latin-1 keeps each byte)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("latin-1").lower()
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False).lower()
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value).lower()


async def dump(rt: Any) -> dict[str, list[dict[str, str]]]:
    out: dict[str, list[dict[str, str]]] = {}
    async with rt.engine.connect() as conn:
        for table in TABLES:
            rows = (await conn.execute(select(table))).mappings().all()
            out[table.name] = [{k: as_text(v) for k, v in row.items() if v is not None} for row in rows]
    return out


def find(stored: dict[str, list[dict[str, str]]], needle: str) -> list[str]:
    """Where `needle` (any letter case; also its UTF-8 bytes) appears, as table.column names."""
    forms = {needle.lower(), needle.encode().decode("latin-1").lower()}
    return [
        f"{table}.{column}"
        for table, rows in stored.items()
        for row in rows
        for column, text in row.items()
        if any(form in text for form in forms)
    ]


async def test_no_secret_is_stored_in_clear(client, accounts, rt, clock):
    a = await accounts.register("keeper1", password=PASSWORD, email=EMAIL)
    secret, codes = await enable_2fa(client, a, clock)
    tokens = [a["token"]]
    r = await login(client, EMAIL.lower(), PASSWORD, totp_code=next_code(secret, clock))
    assert r.status_code == 200, r.text
    tokens.append(r.json()["token"])
    r = await login(client, "keeper1", PASSWORD, backup_code=codes[1])
    assert r.status_code == 200, r.text
    tokens.append(r.json()["token"])
    r = await client.post(STEP_UP, json={"password": PASSWORD, "backup_code": codes[2]}, headers=a.headers)
    assert r.status_code == 200, r.text
    # Failures whose request bodies carry secrets: the email as login, the password as login.
    await login(client, EMAIL.upper(), "wrong password " + PASSWORD)
    await login(client, PASSWORD, PASSWORD)
    # A rotated token.
    clock.advance(hours=25)
    r = await client.get("/api/v1/users/@me", headers={"Authorization": f"Bearer {tokens[1]}"})
    tokens.append(r.headers["X-Session-Token"])
    # Another account with a pending (not yet enabled) TOTP secret.
    b = await accounts.register("pending2", email="Pending.Person@Example.org")
    pending = (await client.post(SETUP, headers=b.headers)).json()["secret"]

    stored = await dump(rt)
    assert len(stored["users"]) == 2 and len(stored["backup_codes"]) == 8 and len(stored["sessions"]) == 4
    assert len(stored["security_events"]) >= 10
    # The scanner works: things that are meant to be stored are found.
    assert find(stored, "keeper1") and find(stored, "pending2") and find(stored, "login.failure")

    needles = {
        "password": PASSWORD,
        "email": EMAIL,
        "email local part": "Secret.Keeper+Chat",
        "other email": "Pending.Person@Example.org",
        "totp secret": secret,
        "pending totp secret": pending,
    }
    needles.update({f"token {i}": t for i, t in enumerate(tokens)})
    for i, code in enumerate(codes):
        needles[f"backup code {i}"] = code
        needles[f"backup code {i} without dashes"] = code.replace("-", "")
    leaks = {name: where for name, value in needles.items() if (where := find(stored, value))}
    assert leaks == {}


async def test_hashes_and_digests_are_what_is_stored(client, accounts, rt, clock):
    a = await accounts.register("alice", password=PASSWORD)
    await enable_2fa(client, a, clock)
    async with rt.engine.connect() as conn:
        user = (await conn.execute(select(users).where(users.c.id == int(a.id)))).mappings().one()
        session = (await conn.execute(select(sessions))).mappings().one()
        hashes = (await conn.execute(select(backup_codes.c.code_hash))).scalars().all()
    assert user["password_hash"].startswith("$argon2id$")
    assert rt.password_hasher.verify(user["password_hash"], PASSWORD)
    assert len(hashes) == 8 and all(h.startswith("$argon2id$") for h in hashes)
    assert len(set(hashes)) == 8
    assert session["token_hash"] == hashlib.sha256(a["token"].encode()).hexdigest()
    # Email and TOTP secret are ciphertext (bytes), with a lookup index that is not the address.
    assert isinstance(user["email_enc"], bytes) and len(user["email_enc"]) > 12
    assert isinstance(user["totp_secret_enc"], bytes)
    assert len(user["email_index"]) == 64 and "@" not in user["email_index"]


async def test_production_password_hasher_is_memory_hard_argon2id(tmp_path: Path):
    settings = Settings(DATA_DIR=tmp_path, SECRET_KEY="k" * 40, DATABASE_URL=f"sqlite:///{tmp_path / 'x.db'}")
    runtime = Runtime(settings)
    try:
        for hasher in (runtime.password_hasher, runtime.code_hasher):
            assert hasher.type is Type.ID
            assert hasher.memory_cost >= 19_456  # KiB (OWASP minimum for argon2id)
            assert hasher.time_cost >= 2
        sample = runtime.password_hasher.hash("sample password 123")
        assert sample.startswith("$argon2id$v=19$")
        params = dict(p.split("=") for p in sample.split("$")[3].split(","))
        assert int(params["m"]) >= 19_456
        assert runtime.password_hasher.verify(sample, "sample password 123")
    finally:
        await runtime.engine.dispose()

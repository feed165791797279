"""Slow hashes (passwords, backup codes) never run inside a write transaction: on SQLite one held open
for ~8 backup-code hashes blocks every other writer of the service. Each flow below goes through the
public interface while the hashers record whether a write transaction of the runtime was open."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from meadhall.accounts import admin_ops
from tests.support.accounts import BACKUP_CODES, DISABLE, STEP_UP, enable_2fa, login


class Watch:
    """Counts open write transactions of the runtime and the hashes done while one was open."""

    def __init__(self) -> None:
        self.open_writes = 0
        self.calls: list[tuple[str, bool]] = []  # (hasher.method, inside a write transaction)
        self._lock = threading.Lock()

    def note(self, what: str) -> None:
        with self._lock:
            self.calls.append((what, self.open_writes > 0))

    def inside(self) -> list[str]:
        return [what for what, inside in self.calls if inside]


class WatchedHasher:
    def __init__(self, inner: Any, name: str, watch: Watch) -> None:
        self.inner, self.name, self.watch = inner, name, watch

    def hash(self, secret: str) -> str:
        self.watch.note(f"{self.name}.hash")
        return str(self.inner.hash(secret))

    def verify(self, encoded: str, secret: str) -> bool:
        self.watch.note(f"{self.name}.verify")
        return bool(self.inner.verify(encoded, secret))


@pytest.fixture
def watch(rt: Any) -> Watch:
    w = Watch()
    original = rt.uow

    @asynccontextmanager
    async def watched_uow() -> AsyncIterator[Any]:
        async with original() as uow:
            w.open_writes += 1
            try:
                yield uow
            finally:
                w.open_writes -= 1

    rt.uow = watched_uow
    rt.password_hasher = WatchedHasher(rt.password_hasher, "password", w)
    rt.code_hasher = WatchedHasher(rt.code_hasher, "code", w)
    return w


async def test_2fa_flows_hash_and_verify_backup_codes_outside_write_transactions(client, accounts, clock, watch):
    a = await accounts.register("alice")
    _, codes = await enable_2fa(client, a, clock)
    r = await login(client, "alice", a["password"], backup_code=codes[0])
    assert r.status_code == 200, r.text
    r = await client.post(STEP_UP, json={"password": a["password"], "backup_code": codes[1]}, headers=a.headers)
    assert r.status_code == 200, r.text
    r = await client.post(BACKUP_CODES, headers=a.headers)
    assert r.status_code == 200, r.text
    fresh = r.json()["backup_codes"]
    # A wrong backup code is compared with every unused hash: all of them outside the transaction too.
    r = await client.post(DISABLE, json={"backup_code": "zzzz-zzzz-zzzz"}, headers=a.headers)
    assert r.status_code == 401
    r = await client.post(DISABLE, json={"backup_code": fresh[0]}, headers=a.headers)
    assert r.status_code == 200, r.text
    done = {what for what, _ in watch.calls}
    assert {"password.hash", "password.verify", "code.hash", "code.verify"} <= done, done
    assert watch.inside() == []


async def test_cli_totp_setup_and_user_creation_hash_outside_write_transactions(rt, accounts, watch):
    await accounts.register("alice")
    await admin_ops.totp_setup(rt, "alice@example.com", force=False)
    await admin_ops.create_users(rt, admin_ops.bulk_specs(rt, 3, "bulk"))
    done = {what for what, _ in watch.calls}
    assert {"password.hash", "code.hash"} <= done, done
    assert watch.inside() == []

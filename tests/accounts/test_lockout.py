"""Sign-in lockout (docs/architecture.md, docs/reference/limits.md): 5 consecutive failures per login value lock it for 15 minutes
(the sixth attempt gets 429 even with the right password); 50 failures from one address lock the address.
Attempts during a lock are neither counted nor extend it; a success resets the count; asking for the
second factor is not a failure."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from tests.support.accounts import enable_2fa, login, next_code, totp_code
from tests.support.http import assert_error

WRONG = "definitely the wrong password"


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    # The per-address request bucket (30/60) would otherwise answer before the address lockout does.
    return {"RATE_LIMITS": {"auth.login": "10000/60", "global": "10000/60"}}


async def fail(client: Any, login_value: str, times: int, password: str = WRONG) -> None:
    for _ in range(times):
        assert_error(await login(client, login_value, password), 401, "auth.invalid_credentials")


def assert_locked(r: Any, remaining: float) -> None:
    err = assert_error(r, 429, "rate_limited")
    assert err["bucket"] == "auth.lockout"
    assert err["retry_after"] == pytest.approx(remaining, abs=1)
    assert int(r.headers["Retry-After"]) == pytest.approx(remaining, abs=1)
    assert "set-cookie" not in r.headers


async def test_sixth_attempt_is_locked_even_with_the_right_password(client, accounts):
    a = await accounts.register("alice")
    await fail(client, "alice", 5)
    r = await login(client, "alice", a["password"])
    assert_locked(r, 900)
    assert r.headers["Retry-After"] == "900"


async def test_four_failures_do_not_lock(client, accounts):
    a = await accounts.register("alice")
    await fail(client, "alice", 4)
    assert (await login(client, "alice", a["password"])).status_code == 200


async def test_lock_ends_after_15_minutes(client, accounts, clock):
    a = await accounts.register("alice")
    await fail(client, "alice", 5)
    clock.advance(899)
    assert_locked(await login(client, "alice", a["password"]), 1)
    clock.advance(2)
    r = await login(client, "alice", a["password"])
    assert r.status_code == 200, r.text


async def test_attempts_during_the_lock_neither_count_nor_extend_it(client, accounts, clock):
    a = await accounts.register("alice")
    await fail(client, "alice", 5)
    for _ in range(10):
        clock.advance(60)
        r = await login(client, "alice", WRONG)
        assert r.status_code == 429
    # 600 s passed: the remaining lock is 300 s, not a fresh 900.
    assert_locked(await login(client, "alice", a["password"]), 300)
    clock.advance(301)
    assert (await login(client, "alice", a["password"])).status_code == 200


async def test_lock_applies_to_the_login_value_whatever_its_case(client, accounts):
    a = await accounts.register("alice")
    await fail(client, "Alice", 3)
    await fail(client, "ALICE", 2)
    assert_locked(await login(client, "alice", a["password"]), 900)


async def test_lock_is_per_login_value(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    await fail(client, "alice", 5)
    assert (await login(client, "bob", b["password"])).status_code == 200
    assert_locked(await login(client, "alice", a["password"]), 900)


async def test_unknown_accounts_are_locked_too(client):
    await fail(client, "ghost", 5)
    assert_locked(await login(client, "ghost", WRONG), 900)
    await fail(client, "ghost@example.com", 5)
    assert_locked(await login(client, "ghost@example.com", WRONG), 900)


async def test_success_resets_the_counter(client, accounts):
    a = await accounts.register("alice")
    await fail(client, "alice", 4)
    assert (await login(client, "alice", a["password"])).status_code == 200
    await fail(client, "alice", 4)
    assert (await login(client, "alice", a["password"])).status_code == 200
    # ... and counting starts again from zero after that success.
    await fail(client, "alice", 4)
    await fail(client, "alice", 1)
    assert_locked(await login(client, "alice", a["password"]), 900)


async def test_failures_older_than_the_window_are_forgotten(client, accounts, clock):
    a = await accounts.register("alice")
    await fail(client, "alice", 4)
    clock.advance(901)
    await fail(client, "alice", 4)
    assert (await login(client, "alice", a["password"])).status_code == 200


async def test_wrong_second_factor_counts_as_a_failure(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    clock.advance(30)
    bad = totp_code(secret, clock, steps=4)
    for _ in range(5):
        assert_error(await login(client, "alice", a["password"], totp_code=bad), 401, "auth.invalid_code")
    assert_locked(await login(client, "alice", a["password"], totp_code=totp_code(secret, clock)), 900)


async def test_missing_second_factor_does_not_count(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    await fail(client, "alice", 4)
    for _ in range(6):
        assert_error(await login(client, "alice", a["password"]), 401, "auth.2fa_required")
    r = await login(client, "alice", a["password"], totp_code=next_code(secret, clock))
    assert r.status_code == 200, r.text


async def test_address_is_locked_after_50_failures_across_logins(client, accounts, clock):
    a = await accounts.register("alice")
    for i in range(49):
        await fail(client, f"someone{i}", 1)
    # 49 failures: the address still works.
    assert (await login(client, "alice", a["password"])).status_code == 200
    await fail(client, "someone49", 1)
    # The 50th failure locked the address: every login value is refused, the right password too.
    assert_locked(await login(client, "alice", a["password"]), 900)
    assert_locked(await login(client, "never-seen", WRONG), 900)
    clock.advance(901)
    assert (await login(client, "alice", a["password"])).status_code == 200


async def test_address_failures_older_than_the_window_are_forgotten(client, accounts, clock):
    a = await accounts.register("alice")
    for i in range(30):
        await fail(client, f"someone{i}", 1)
    clock.advance(901)
    for i in range(30, 60):
        await fail(client, f"someone{i}", 1)
    assert (await login(client, "alice", a["password"])).status_code == 200


async def test_concurrent_failures_are_all_counted(app, rt):
    """Five failures sent at once lock the login value like five in a row. Each group comes from its own
    address so that the address lockout (50) cannot stand in for the per-login one."""
    outcomes = []
    for group in range(10):
        transport = httpx.ASGITransport(app=app, client=(f"198.51.100.{group + 1}", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            body = {"login": f"target{group}", "password": WRONG}
            rs = await asyncio.gather(*(c.post("/api/v1/auth/login", json=body) for _ in range(5)))
            assert all(r.status_code == 401 for r in rs), [r.text for r in rs]
            outcomes.append((await c.post("/api/v1/auth/login", json=body)).status_code)
    assert outcomes == [429] * 10

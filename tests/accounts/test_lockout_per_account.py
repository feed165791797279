"""The sign-in lockout counts per account (docs/architecture.md, "Sign-in lockout"):
the username and the email of one account, in any letter case, share one count of 5 failures per 15
minutes, so typing the other identifier gives no fresh guesses; a value that names no account is counted
under itself and locked after 5 failures like a known one."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.accounts import login
from tests.support.http import assert_error

WRONG = "definitely the wrong password"


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    # The per-address request bucket (30/60) would otherwise answer before the lockout does.
    return {"RATE_LIMITS": {"auth.login": "10000/60", "global": "10000/60"}}


async def fail(client: Any, login_value: str, times: int) -> None:
    for _ in range(times):
        assert_error(await login(client, login_value, WRONG), 401, "auth.invalid_credentials")


def assert_locked(r: Any) -> None:
    err = assert_error(r, 429, "rate_limited")
    assert err["bucket"] == "auth.lockout"
    assert err["retry_after"] == pytest.approx(900, abs=1)


async def test_username_and_email_share_one_count(client, accounts):
    a = await accounts.register("alice")
    await fail(client, "alice", 3)
    await fail(client, "alice@example.com", 2)
    # Five guesses on the account, whichever identifier: the sixth attempt is locked under both.
    for value in ("alice", "Alice@Example.com", "ALICE"):
        assert_locked(await login(client, value, a["password"]))


async def test_locking_the_username_locks_the_email(client, accounts):
    a = await accounts.register("alice")
    await fail(client, "ALICE", 5)
    assert_locked(await login(client, "alice@EXAMPLE.com", a["password"]))


async def test_locking_the_email_locks_the_username(client, accounts):
    a = await accounts.register("alice")
    await fail(client, "Alice@example.com", 5)
    assert_locked(await login(client, "alice", a["password"]))


async def test_a_success_by_either_identifier_resets_the_count(client, accounts):
    a = await accounts.register("alice")
    await fail(client, "alice", 4)
    assert (await login(client, "alice@example.com", a["password"])).status_code == 200
    await fail(client, "alice@example.com", 4)
    assert (await login(client, "alice", a["password"])).status_code == 200


async def test_other_accounts_are_not_locked(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    await fail(client, "alice", 3)
    await fail(client, "alice@example.com", 2)
    assert (await login(client, "bob@example.com", b["password"])).status_code == 200
    assert_locked(await login(client, "alice", a["password"]))


async def test_unknown_logins_lock_like_known_ones(client, accounts):
    """An unknown value is locked after 5 failures, as an account is: the lockout does not tell them apart."""
    await accounts.register("alice")
    await fail(client, "ghost", 5)
    assert_locked(await login(client, "GHOST", WRONG))
    await fail(client, "Ghost@example.com", 5)
    assert_locked(await login(client, "ghost@example.com", WRONG))
    # Each unknown value counts under itself: one locked value locks no other.
    await fail(client, "phantom", 4)
    assert_error(await login(client, "phantom", WRONG), 401, "auth.invalid_credentials")


async def test_step_up_failures_lock_the_account_once(client, accounts):
    """A re-verification counts on the same account count as sign-ins by either identifier."""
    a = await accounts.register("alice")
    await fail(client, "alice", 2)
    await fail(client, "alice@example.com", 2)
    r = await client.post("/api/v1/auth/step-up", json={"password": WRONG}, headers=a.headers)
    assert_error(r, 401, "auth.invalid_credentials")
    assert_locked(await login(client, "alice", a["password"]))

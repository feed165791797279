"""The sign-in lockout holds under parallel guesses (docs/architecture.md): an attempt is counted before its
password is verified, so at most 5 guesses per login value reach verification however many are sent
at once, on the in-process store and on Redis. Failed step-up re-verifications (password, or the code of
2FA disable) count towards the same lockout."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from tests.support.accounts import DISABLE, STEP_UP, enable_2fa, login, next_code, totp_code
from tests.support.http import assert_error
from tests.support.isolation import TEST_REDIS_URL

WRONG = "definitely the wrong password"
LOGIN = "/api/v1/auth/login"


@pytest.fixture(params=["memory", "redis"])
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "redis" and not TEST_REDIS_URL:
        pytest.skip("TEST_REDIS_URL is not set")
    return {
        "REDIS_URL": TEST_REDIS_URL if request.param == "redis" else None,
        # The request buckets would otherwise answer before the lockout does.
        "RATE_LIMITS": {"auth.login": "10000/60", "auth.step_up": "10000/60", "auth.2fa": "10000/60",
                        "global": "10000/60"},
    }


class SlowCountingHasher:
    """The test hasher, made slow (like the real ~190 ms one) and counting its verifications."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.verified = 0
        self._lock = threading.Lock()

    def hash(self, password: str) -> str:
        return str(self.inner.hash(password))

    def verify(self, encoded: str, password: str) -> bool:
        with self._lock:
            self.verified += 1
        time.sleep(0.05)
        return bool(self.inner.verify(encoded, password))


@pytest.fixture
def hasher(rt: Any) -> SlowCountingHasher:
    slow = SlowCountingHasher(rt.password_hasher)
    rt.password_hasher = slow
    return slow


def statuses(responses: list[Any]) -> dict[int, int]:
    out: dict[int, int] = {}
    for r in responses:
        out[r.status_code] = out.get(r.status_code, 0) + 1
    return out


async def test_parallel_wrong_passwords_reach_verification_at_most_five_times(client, accounts, hasher, rt):
    a = await accounts.register("alice")
    assert rt.store.__class__.__name__ == ("RedisStore" if rt.settings.REDIS_URL else "MemoryStore")
    body = {"login": "alice", "password": WRONG}
    rs = await asyncio.gather(*(client.post(LOGIN, json=body) for _ in range(20)))
    assert statuses(rs) == {401: 5, 429: 15}, [r.text for r in rs]
    assert hasher.verified == 5
    for r in rs:
        if r.status_code == 429:
            assert r.json()["error"]["bucket"] == "auth.lockout"
    # Locked for everyone, the right password included.
    assert_error(await login(client, "alice", a["password"]), 429, "rate_limited")
    assert hasher.verified == 5


async def test_parallel_attempts_with_the_right_password_do_not_lock(client, accounts, hasher):
    a = await accounts.register("alice")
    body = {"login": "alice", "password": a["password"]}
    # Successful attempts give their reservations back (and reset the count): bursts of right passwords
    # leave nothing counted.
    for _ in range(2):
        rs = await asyncio.gather(*(client.post(LOGIN, json=body) for _ in range(4)))
        client.cookies.clear()
        assert statuses(rs) == {200: 4}, [r.text for r in rs]
    await asyncio.gather(*(login(client, "alice", WRONG) for _ in range(4)))
    assert (await login(client, "alice", a["password"])).status_code == 200


async def test_the_attempt_reaching_the_threshold_with_the_right_password_unlocks(client, accounts):
    a = await accounts.register("alice")
    for _ in range(4):
        assert_error(await login(client, "alice", WRONG), 401, "auth.invalid_credentials")
    assert (await login(client, "alice", a["password"])).status_code == 200
    for _ in range(4):
        assert_error(await login(client, "alice", WRONG), 401, "auth.invalid_credentials")
    assert (await login(client, "alice", a["password"])).status_code == 200


async def test_missing_second_factor_gives_its_reservation_back(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    for _ in range(4):
        assert_error(await login(client, "alice", WRONG), 401, "auth.invalid_credentials")
    # The fifth and later attempts ask for the code: not failures, so no lock either.
    for _ in range(3):
        assert_error(await login(client, "alice", a["password"]), 401, "auth.2fa_required")
    r = await login(client, "alice", a["password"], totp_code=next_code(secret, clock))
    assert r.status_code == 200, r.text


# ---- step-up ---------------------------------------------------------------------------------------


async def step_up(client: Any, account: Any, password: str, **extra: Any) -> Any:
    return await client.post(STEP_UP, json={"password": password, **extra}, headers=account.headers)


async def test_failed_step_ups_lock_sign_in_by_username_and_email(client, accounts):
    a = await accounts.register("alice")
    for _ in range(5):
        assert_error(await step_up(client, a, WRONG), 401, "auth.invalid_credentials")
    for value in ("alice", "alice@example.com"):
        err = assert_error(await login(client, value, a["password"]), 429, "rate_limited")
        assert err["bucket"] == "auth.lockout"
    # The step-up itself is refused while locked, the right password included.
    err = assert_error(await step_up(client, a, a["password"]), 429, "rate_limited")
    assert err["bucket"] == "auth.lockout"


async def test_failed_sign_ins_lock_step_up_too(client, accounts):
    a = await accounts.register("alice")
    for _ in range(5):
        assert_error(await login(client, "alice@example.com", WRONG), 401, "auth.invalid_credentials")
    assert_error(await step_up(client, a, a["password"]), 429, "rate_limited")


async def test_parallel_step_ups_reach_verification_at_most_five_times(client, accounts, hasher):
    a = await accounts.register("alice")
    rs = await asyncio.gather(*(step_up(client, a, WRONG) for _ in range(20)))
    assert statuses(rs) == {401: 5, 429: 15}, [r.text for r in rs]
    assert hasher.verified == 5


async def test_a_successful_step_up_resets_the_count(client, accounts):
    a = await accounts.register("alice")
    for _ in range(4):
        assert_error(await step_up(client, a, WRONG), 401, "auth.invalid_credentials")
    assert (await step_up(client, a, a["password"])).status_code == 200
    for _ in range(4):
        assert_error(await login(client, "alice", WRONG), 401, "auth.invalid_credentials")
    assert (await login(client, "alice", a["password"])).status_code == 200


async def test_step_up_asking_for_the_code_is_not_a_failure(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    for _ in range(6):
        assert_error(await step_up(client, a, a["password"]), 401, "auth.2fa_required")
    r = await login(client, "alice", a["password"], totp_code=next_code(secret, clock))
    assert r.status_code == 200, r.text


async def test_wrong_codes_at_step_up_and_2fa_disable_lock_sign_in(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    clock.advance(30)
    bad = totp_code(secret, clock, steps=4)
    for _ in range(3):
        assert_error(await step_up(client, a, a["password"], totp_code=bad), 401, "auth.invalid_code")
    for _ in range(2):
        r = await client.post(DISABLE, json={"totp_code": bad}, headers=a.headers)
        assert_error(r, 401, "auth.invalid_code")
    r = await login(client, "alice", a["password"], totp_code=totp_code(secret, clock))
    assert_error(r, 429, "rate_limited")
    # 2FA disable is refused while locked, and 2FA stays on.
    r = await client.post(DISABLE, json={"totp_code": totp_code(secret, clock)}, headers=a.headers)
    assert_error(r, 429, "rate_limited")
    assert (await client.get("/api/v1/users/@me", headers=a.headers)).json()["user"]["totp_enabled"] is True

"""POST /auth/login (the OpenAPI document, docs/architecture.md): by username or email in any letter case, identical refusals
for unknown accounts and wrong passwords, instance bans (at sign-in and for live sessions), the 2FA
enrolment rule for administrators, and the second factor (TOTP with replay protection, backup codes)."""

from __future__ import annotations

import asyncio
import re

import pytest
from sqlalchemy import update

from meadhall.db.schema import users
from tests.support.accounts import LOGIN, enable_2fa, login, next_code, totp_code
from tests.support.factories import make_admin
from tests.support.http import assert_error

ME = "/api/v1/users/@me"


async def ban(rt, account, clock) -> None:
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(account.id)).values(banned_at=clock.now()))


async def test_login_by_username_any_case(client, accounts):
    a = await accounts.register("Alice", email="alice.w@example.com")
    for value in ("Alice", "alice", "ALICE", "  aLiCe  "):
        r = await login(client, value, a["password"])
        assert r.status_code == 200, (value, r.text)
        data = r.json()
        assert set(data) == {"user", "token", "session", "totp_enabled"}
        assert data["user"]["id"] == a.id
        assert data["user"]["email"] == "alice.w@example.com"
        assert data["totp_enabled"] is False and data["user"]["totp_enabled"] is False
        assert data["session"]["method"] == "password" and data["session"]["current"] is True
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", data["token"])


async def test_login_by_email_any_case(client, accounts):
    a = await accounts.register("bob", email="Bob.Builder@Example.com")
    for value in ("Bob.Builder@example.com", "bob.builder@example.com", "BOB.BUILDER@EXAMPLE.COM"):
        r = await login(client, value, a["password"])
        assert r.status_code == 200, (value, r.text)
        assert r.json()["user"]["id"] == a.id


async def test_login_by_cyrillic_email_in_other_case(client, accounts):
    a = await accounts.register("yozh", email="Ёжик@example.com")
    r = await login(client, "ёЖИК@EXAMPLE.com", a["password"])
    assert r.status_code == 200, r.text
    assert r.json()["user"]["id"] == a.id


async def test_login_sets_the_cookie_and_issues_a_new_session(client, accounts):
    a = await accounts.register("alice")
    r = await client.post(LOGIN, json={"login": "alice", "password": a["password"]})
    client.cookies.clear()
    assert r.status_code == 200, r.text
    token = r.json()["token"]
    assert token != a["token"]
    assert r.json()["session"]["id"] != a["session"]["id"]
    assert r.headers.get_list("set-cookie") == [
        f"__Host-session={token}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=2592000"
    ]
    # Both sessions work, through either carrier.
    assert (await client.get(ME, headers={"Authorization": f"Bearer {token}"})).status_code == 200
    assert (await client.get(ME, headers={"Cookie": f"__Host-session={token}"})).status_code == 200
    assert (await client.get(ME, headers=a.headers)).status_code == 200


async def test_password_is_case_sensitive(client, accounts):
    await accounts.register("alice", password="Correct Horse Battery")
    assert_error(await login(client, "alice", "correct horse battery"), 401, "auth.invalid_credentials")
    assert (await login(client, "alice", "Correct Horse Battery")).status_code == 200


async def test_wrong_password_and_unknown_account_answer_identically(client, accounts):
    a = await accounts.register("alice")
    wrong = await login(client, "alice", a["password"] + "!")
    unknown = await login(client, "nobody", a["password"])
    unknown_email = await login(client, "nobody@example.com", a["password"])
    for r in (wrong, unknown, unknown_email):
        assert_error(r, 401, "auth.invalid_credentials")
        assert "set-cookie" not in r.headers
    assert wrong.json() == unknown.json() == unknown_email.json()
    assert set(wrong.json()["error"]) == {"code", "message"}


async def test_deleted_account_cannot_sign_in(client, accounts, rt, clock):
    a = await accounts.register("alice")
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(a.id)).values(deleted_at=clock.now()))
    assert_error(await login(client, "alice", a["password"]), 401, "auth.invalid_credentials")


async def test_missing_fields_are_validation_errors(client):
    r = await client.post(LOGIN, json={"login": "alice"})
    err = assert_error(r, 422, "validation.failed")
    assert {d["field"] for d in err["details"]} == {"password"}
    r = await client.post(LOGIN, json={"login": "", "password": "whatever-password"})
    assert {d["field"] for d in assert_error(r, 422, "validation.failed")["details"]} == {"login"}


# ---- instance bans -------------------------------------------------------------------------------


async def test_banned_user_cannot_sign_in(client, accounts, rt, clock):
    a = await accounts.register("alice")
    await ban(rt, a, clock)
    r = await login(client, "alice", a["password"])
    assert_error(r, 403, "user.banned")
    assert "set-cookie" not in r.headers
    # Credentials are checked first: a wrong password of a banned account says nothing about the ban.
    assert_error(await login(client, "alice", "wrong password 123"), 401, "auth.invalid_credentials")


async def test_existing_session_of_banned_user_gets_403_once_then_401(client, accounts, rt, clock):
    a = await accounts.register("alice")
    other = await accounts.register("bob")
    assert (await client.get(ME, headers=a.headers)).status_code == 200
    await ban(rt, a, clock)
    assert_error(await client.get(ME, headers=a.headers), 403, "user.banned")
    assert_error(await client.get(ME, headers=a.headers), 401, "auth.unauthorized")
    # Only the banned user's session is affected.
    assert (await client.get(ME, headers=other.headers)).status_code == 200


async def test_banned_cookie_session_gets_403_then_401(client, accounts, rt, clock):
    a = await accounts.register("alice")
    await ban(rt, a, clock)
    cookie = {"Cookie": f"__Host-session={a['token']}"}
    assert_error(await client.get("/api/v1/auth/sessions", headers=cookie), 403, "user.banned")
    assert_error(await client.get("/api/v1/auth/sessions", headers=cookie), 401, "auth.unauthorized")


# ---- administrators must enrol in 2FA ------------------------------------------------------------


async def test_admin_without_2fa_gets_enrollment_hint(client, accounts, rt):
    a = await accounts.register("root", email="Root.Admin@example.com")
    await make_admin(rt, a)
    r = await login(client, "root", a["password"])
    err = assert_error(r, 403, "auth.2fa_enrollment_required")
    assert err["hint"] == "meadhall totp-setup --email Root.Admin@example.com"
    assert "set-cookie" not in r.headers
    # A wrong password still gets the generic refusal, no hint.
    err = assert_error(await login(client, "root", "wrong password 123"), 401, "auth.invalid_credentials")
    assert "hint" not in err


async def test_admin_with_2fa_signs_in(client, accounts, rt, clock):
    a = await accounts.register("root")
    secret, _ = await enable_2fa(client, a, clock)
    await make_admin(rt, a)
    assert_error(await login(client, "root", a["password"]), 401, "auth.2fa_required")
    r = await login(client, "root", a["password"], totp_code=next_code(secret, clock))
    assert r.status_code == 200, r.text
    assert r.json()["user"]["is_instance_admin"] is True
    assert r.json()["user"]["badges"] == ["instance_admin"]


# ---- second factor -------------------------------------------------------------------------------


async def test_2fa_required_when_no_code(client, accounts, clock):
    a = await accounts.register("alice")
    await enable_2fa(client, a, clock)
    r = await login(client, "alice", a["password"])
    assert_error(r, 401, "auth.2fa_required")
    assert "set-cookie" not in r.headers
    # Empty strings are no code either.
    assert_error(await login(client, "alice", a["password"], totp_code="", backup_code=""), 401,
                 "auth.2fa_required")


async def test_2fa_wrong_code(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    clock.advance(30)
    for code in (totp_code(secret, clock, steps=3), "abcdef", "1234567"):
        r = await login(client, "alice", a["password"], totp_code=code)
        assert_error(r, 401, "auth.invalid_code")
        assert "set-cookie" not in r.headers


async def test_2fa_wrong_password_with_right_code_is_invalid_credentials(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    code = next_code(secret, clock)
    assert_error(await login(client, "alice", "wrong password 123", totp_code=code), 401,
                 "auth.invalid_credentials")
    # The code was not consumed by the refused attempt.
    assert (await login(client, "alice", a["password"], totp_code=code)).status_code == 200


async def test_2fa_right_code_signs_in(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    r = await login(client, "alice", a["password"], totp_code=next_code(secret, clock))
    assert r.status_code == 200, r.text
    assert r.json()["totp_enabled"] is True and r.json()["user"]["totp_enabled"] is True
    token = r.json()["token"]
    assert (await client.get(ME, headers={"Authorization": f"Bearer {token}"})).status_code == 200


async def test_2fa_code_of_previous_and_next_step_accepted(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    clock.advance(60)  # two steps on; the code of one step back is fresh
    assert (await login(client, "alice", a["password"], totp_code=totp_code(secret, clock, -1))).status_code == 200
    assert (await login(client, "alice", a["password"], totp_code=totp_code(secret, clock, 1))).status_code == 200
    clock.advance(120)
    r = await login(client, "alice", a["password"], totp_code=totp_code(secret, clock, 2))
    assert_error(r, 401, "auth.invalid_code")


async def test_2fa_code_replay_in_same_step_refused(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    code = next_code(secret, clock)
    assert (await login(client, "alice", a["password"], totp_code=code)).status_code == 200
    clock.advance(5)  # still the same 30 s step
    assert_error(await login(client, "alice", a["password"], totp_code=code), 401, "auth.invalid_code")
    # An older step's code is refused after a newer one was used.
    assert_error(await login(client, "alice", a["password"], totp_code=totp_code(secret, clock, -1)), 401,
                 "auth.invalid_code")
    # The next step's code works.
    assert (await login(client, "alice", a["password"], totp_code=next_code(secret, clock))).status_code == 200


async def test_backup_code_works_once(client, accounts, clock):
    a = await accounts.register("alice")
    _, codes = await enable_2fa(client, a, clock)
    r = await login(client, "alice", a["password"], backup_code=codes[3])
    assert r.status_code == 200, r.text
    assert_error(await login(client, "alice", a["password"], backup_code=codes[3]), 401, "auth.invalid_code")
    # The other codes are still good.
    assert (await login(client, "alice", a["password"], backup_code=codes[4])).status_code == 200


@pytest.mark.parametrize("transform", [
    str.upper,
    lambda c: " ".join(c),
    lambda c: c.replace("-", ""),
    lambda c: "  " + c.upper().replace("-", " ") + " ",
])
async def test_backup_code_case_and_spaces_ignored(client, accounts, clock, transform):
    a = await accounts.register("alice")
    _, codes = await enable_2fa(client, a, clock)
    r = await login(client, "alice", a["password"], backup_code=transform(codes[0]))
    assert r.status_code == 200, r.text
    # Consumed, whatever spelling is used next.
    assert_error(await login(client, "alice", a["password"], backup_code=codes[0]), 401, "auth.invalid_code")


async def test_unknown_backup_code_refused(client, accounts, clock):
    a = await accounts.register("alice")
    _, codes = await enable_2fa(client, a, clock)
    for bad in ("aaaa-bbbb-cccc", codes[0][:-1], codes[0] + "x", "not a code"):
        if bad in codes:
            continue
        assert_error(await login(client, "alice", a["password"], backup_code=bad), 401, "auth.invalid_code")


async def test_backup_codes_of_another_user_refused(client, accounts, clock):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    await enable_2fa(client, a, clock)
    _, bob_codes = await enable_2fa(client, b, clock)
    assert_error(await login(client, "alice", a["password"], backup_code=bob_codes[0]), 401, "auth.invalid_code")


@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"auth.login": "3/60"}}])
async def test_login_rate_limit_per_address(client, accounts, clock):
    a = await accounts.register("alice")
    for _ in range(3):
        assert (await login(client, "alice", a["password"])).status_code == 200
    r = await login(client, "alice", a["password"])
    err = assert_error(r, 429, "rate_limited")
    assert err["bucket"] == "auth.login"
    assert r.headers["Retry-After"] == "20"
    clock.advance(20)
    assert (await login(client, "alice", a["password"])).status_code == 200


async def test_concurrent_replay_of_one_totp_code_signs_in_once(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    code = next_code(secret, clock)
    body = {"login": "alice", "password": a["password"], "totp_code": code}
    rs = await asyncio.gather(*(client.post(LOGIN, json=body) for _ in range(5)))
    client.cookies.clear()
    assert sorted(r.status_code for r in rs) == [200, 401, 401, 401, 401], [r.text for r in rs]
    assert {r.json()["error"]["code"] for r in rs if r.status_code == 401} == {"auth.invalid_code"}


async def test_concurrent_use_of_one_backup_code_signs_in_once(client, accounts, clock):
    a = await accounts.register("alice")
    _, codes = await enable_2fa(client, a, clock)
    body = {"login": "alice", "password": a["password"], "backup_code": codes[5]}
    rs = await asyncio.gather(*(client.post(LOGIN, json=body) for _ in range(4)))
    client.cookies.clear()
    assert sorted(r.status_code for r in rs) == [200, 401, 401, 401], [r.text for r in rs]

"""Two-factor authentication over HTTP (the OpenAPI document, docs/architecture.md): setup, enable, disable, backup codes.

TOTP codes are computed here with pyotp from the secret the service hands out, at the service clock's
time, independently of the service's own TOTP code. Module-level helpers are shared by the other
account test modules.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import parse_qs, unquote, urlparse

import pytest

from tests.support.accounts import (
    BACKUP_CODES,
    DISABLE,
    ENABLE,
    SETUP,
    STEP_UP,
    enable_2fa,
    login,
    next_code,
    totp_code,
)
from tests.support.factories import make_admin
from tests.support.http import assert_error

BACKUP_CODE = re.compile(r"^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# ---- setup ---------------------------------------------------------------------------------------


async def test_setup_returns_secret_otpauth_url_and_png_qr(client, accounts, clock):
    a = await accounts.register("alice")
    r = await client.post(SETUP, headers=a.headers)
    assert r.status_code == 200, r.text
    data = r.json()
    assert set(data) == {"secret", "otpauth_url", "qr_png"}
    secret = data["secret"]
    assert re.fullmatch(r"[A-Z2-7]{16,}", secret)
    assert base64.b32decode(secret + "=" * (-len(secret) % 8))

    url = urlparse(data["otpauth_url"])
    assert data["otpauth_url"].startswith("otpauth://totp/")
    assert unquote(url.path) == "/localhost:alice"  # label <DOMAIN>:<username>
    query = parse_qs(url.query)
    assert query["secret"] == [secret]
    assert query["issuer"] == ["localhost"]
    assert query.get("digits", ["6"]) == ["6"] and query.get("period", ["30"]) == ["30"]
    assert query.get("algorithm", ["SHA1"]) == ["SHA1"]

    assert data["qr_png"].startswith("data:image/png;base64,")
    png = base64.b64decode(data["qr_png"].removeprefix("data:image/png;base64,"), validate=True)
    assert png.startswith(PNG_SIGNATURE)
    assert len(png) > 100

    me = (await client.get("/api/v1/users/@me", headers=a.headers)).json()["user"]
    assert me["totp_enabled"] is False  # setup alone enables nothing


async def test_setup_requires_a_session(client):
    assert_error(await client.post(SETUP), 401, "auth.unauthorized")


async def test_each_setup_gives_a_new_secret_and_only_the_latest_enables(client, accounts, clock):
    a = await accounts.register("alice")
    first = (await client.post(SETUP, headers=a.headers)).json()["secret"]
    second = (await client.post(SETUP, headers=a.headers)).json()["secret"]
    assert first != second
    r = await client.post(ENABLE, json={"totp_code": totp_code(first, clock)}, headers=a.headers)
    assert_error(r, 401, "auth.invalid_code")
    r = await client.post(ENABLE, json={"totp_code": totp_code(second, clock)}, headers=a.headers)
    assert r.status_code == 200, r.text


# ---- enable --------------------------------------------------------------------------------------


async def test_enable_without_setup(client, accounts, clock):
    a = await accounts.register("alice")
    r = await client.post(ENABLE, json={"totp_code": "123456"}, headers=a.headers)
    assert_error(r, 409, "auth.2fa_setup_required")


async def test_enable_with_wrong_code_keeps_2fa_off(client, accounts, clock):
    a = await accounts.register("alice")
    secret = (await client.post(SETUP, headers=a.headers)).json()["secret"]
    wrong = totp_code(secret, clock, steps=5)  # a real code of another time step
    for code in (wrong, "abcdef", "12345", "1234567"):
        r = await client.post(ENABLE, json={"totp_code": code}, headers=a.headers)
        assert_error(r, 401, "auth.invalid_code")
    me = (await client.get("/api/v1/users/@me", headers=a.headers)).json()["user"]
    assert me["totp_enabled"] is False
    # The pending setup survives a wrong code.
    r = await client.post(ENABLE, json={"totp_code": totp_code(secret, clock)}, headers=a.headers)
    assert r.status_code == 200, r.text


async def test_enable_with_right_code(client, accounts, clock, capture_events):
    a = await accounts.register("alice")
    secret = (await client.post(SETUP, headers=a.headers)).json()["secret"]
    r = await client.post(ENABLE, json={"totp_code": totp_code(secret, clock)}, headers=a.headers)
    assert r.status_code == 200, r.text
    data = r.json()
    assert set(data) == {"user", "backup_codes"}
    assert data["user"]["totp_enabled"] is True
    assert data["user"]["id"] == a.id
    codes = data["backup_codes"]
    assert len(codes) == 8 and len(set(codes)) == 8
    assert all(BACKUP_CODE.match(c) for c in codes), codes

    await capture_events.settle()
    updates = capture_events.of_type("USER_UPDATE")
    assert len(updates) == 1
    assert updates[0].users == (int(a.id),)
    assert updates[0].data["totp_enabled"] is True

    me = (await client.get("/api/v1/users/@me", headers=a.headers)).json()["user"]
    assert me["totp_enabled"] is True


async def test_enable_accepts_the_adjacent_steps(client, accounts, clock):
    for steps, name in ((-1, "early"), (1, "late")):
        a = await accounts.register(name)
        secret = (await client.post(SETUP, headers=a.headers)).json()["secret"]
        r = await client.post(ENABLE, json={"totp_code": totp_code(secret, clock, steps)}, headers=a.headers)
        assert r.status_code == 200, r.text
    a = await accounts.register("tooearly")
    secret = (await client.post(SETUP, headers=a.headers)).json()["secret"]
    r = await client.post(ENABLE, json={"totp_code": totp_code(secret, clock, -2)}, headers=a.headers)
    assert_error(r, 401, "auth.invalid_code")


async def test_enable_accepts_a_code_typed_with_spaces(client, accounts, clock):
    a = await accounts.register("alice")
    secret = (await client.post(SETUP, headers=a.headers)).json()["secret"]
    code = totp_code(secret, clock)
    r = await client.post(ENABLE, json={"totp_code": f" {code[:3]} {code[3:]} "}, headers=a.headers)
    assert r.status_code == 200, r.text


async def test_setup_and_enable_when_already_enabled(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    assert_error(await client.post(SETUP, headers=a.headers), 409, "auth.2fa_already_enabled")
    r = await client.post(ENABLE, json={"totp_code": next_code(secret, clock)}, headers=a.headers)
    assert_error(r, 409, "auth.2fa_already_enabled")


async def test_pending_setup_expires_after_15_minutes(client, accounts, clock):
    a = await accounts.register("alice")
    secret = (await client.post(SETUP, headers=a.headers)).json()["secret"]
    clock.advance(901)
    r = await client.post(ENABLE, json={"totp_code": totp_code(secret, clock)}, headers=a.headers)
    assert_error(r, 409, "auth.2fa_setup_required")


async def test_pending_setup_still_valid_just_before_15_minutes(client, accounts, clock):
    a = await accounts.register("alice")
    secret = (await client.post(SETUP, headers=a.headers)).json()["secret"]
    clock.advance(899)
    r = await client.post(ENABLE, json={"totp_code": totp_code(secret, clock)}, headers=a.headers)
    assert r.status_code == 200, r.text


async def test_the_enabled_secret_is_the_one_that_signs_in(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    r = await login(client, "alice", a["password"], totp_code=next_code(secret, clock))
    assert r.status_code == 200, r.text
    assert r.json()["totp_enabled"] is True and r.json()["user"]["totp_enabled"] is True


async def test_code_used_to_enable_cannot_sign_in_in_the_same_step(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    r = await login(client, "alice", a["password"], totp_code=totp_code(secret, clock))
    assert_error(r, 401, "auth.invalid_code")


# ---- disable -------------------------------------------------------------------------------------


async def test_disable_with_totp(client, accounts, clock, capture_events):
    a = await accounts.register("alice")
    secret, codes = await enable_2fa(client, a, clock)
    r = await client.post(DISABLE, json={"totp_code": next_code(secret, clock)}, headers=a.headers)
    assert r.status_code == 200, r.text
    assert r.json()["user"]["totp_enabled"] is False
    await capture_events.settle()
    last = capture_events.of_type("USER_UPDATE")[-1]
    assert last.users == (int(a.id),) and last.data["totp_enabled"] is False
    # Password alone signs in again; the old backup codes are gone with the factor.
    r = await login(client, "alice", a["password"])
    assert r.status_code == 200, r.text
    assert r.json()["totp_enabled"] is False
    # A new setup is possible again.
    assert (await client.post(SETUP, headers=a.headers)).status_code == 200


async def test_disable_with_backup_code(client, accounts, clock):
    a = await accounts.register("alice")
    _, codes = await enable_2fa(client, a, clock)
    r = await client.post(DISABLE, json={"backup_code": codes[0]}, headers=a.headers)
    assert r.status_code == 200, r.text
    assert r.json()["user"]["totp_enabled"] is False


async def test_disable_needs_a_valid_code(client, accounts, clock):
    a = await accounts.register("alice")
    secret, codes = await enable_2fa(client, a, clock)
    r = await client.post(DISABLE, json={"totp_code": totp_code(secret, clock, 7)}, headers=a.headers)
    assert_error(r, 401, "auth.invalid_code")
    r = await client.post(DISABLE, json={"backup_code": "aaaa-bbbb-cccc"}, headers=a.headers)
    assert_error(r, 401, "auth.invalid_code")
    r = await client.post(DISABLE, json={}, headers=a.headers)
    assert_error(r, 422, "validation.failed")
    me = (await client.get("/api/v1/users/@me", headers=a.headers)).json()["user"]
    assert me["totp_enabled"] is True


async def test_disable_requires_step_up(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    clock.advance(601)
    r = await client.post(DISABLE, json={"totp_code": totp_code(secret, clock)}, headers=a.headers)
    assert_error(r, 403, "auth.step_up_required")
    me = (await client.get("/api/v1/users/@me", headers=a.headers)).json()["user"]
    assert me["totp_enabled"] is True
    # After stepping up (with a second factor), the same kind of request succeeds.
    r = await client.post(STEP_UP, json={"password": a["password"], "totp_code": next_code(secret, clock)},
                          headers=a.headers)
    assert r.status_code == 200, r.text
    r = await client.post(DISABLE, json={"totp_code": next_code(secret, clock)}, headers=a.headers)
    assert r.status_code == 200, r.text


async def test_disable_refused_for_instance_administrators(client, accounts, clock, rt):
    a = await accounts.register("admin")
    secret, _ = await enable_2fa(client, a, clock)
    await make_admin(rt, a)
    r = await client.post(DISABLE, json={"totp_code": next_code(secret, clock)}, headers=a.headers)
    err = assert_error(r, 403, "perm.denied")
    assert err["permission"] is None
    me = (await client.get("/api/v1/users/@me", headers=a.headers)).json()["user"]
    assert me["totp_enabled"] is True


async def test_disable_when_not_enabled(client, accounts):
    a = await accounts.register("alice")
    r = await client.post(DISABLE, json={"totp_code": "123456"}, headers=a.headers)
    assert_error(r, 409, "auth.2fa_not_enabled")


# ---- backup codes --------------------------------------------------------------------------------


async def test_regenerating_backup_codes_invalidates_the_old_ones(client, accounts, clock):
    a = await accounts.register("alice")
    _, old = await enable_2fa(client, a, clock)
    r = await client.post(BACKUP_CODES, headers=a.headers)
    assert r.status_code == 200, r.text
    new = r.json()["backup_codes"]
    assert set(r.json()) == {"backup_codes"}
    assert len(new) == 8 and all(BACKUP_CODE.match(c) for c in new)
    assert not set(new) & set(old)
    r = await login(client, "alice", a["password"], backup_code=old[0])
    assert_error(r, 401, "auth.invalid_code")
    r = await login(client, "alice", a["password"], backup_code=new[0])
    assert r.status_code == 200, r.text


async def test_regenerating_backup_codes_requires_step_up(client, accounts, clock):
    a = await accounts.register("alice")
    _, old = await enable_2fa(client, a, clock)
    clock.advance(601)
    assert_error(await client.post(BACKUP_CODES, headers=a.headers), 403, "auth.step_up_required")
    # Nothing was replaced.
    r = await login(client, "alice", a["password"], backup_code=old[0])
    assert r.status_code == 200, r.text


async def test_regenerating_backup_codes_without_2fa(client, accounts):
    a = await accounts.register("alice")
    assert_error(await client.post(BACKUP_CODES, headers=a.headers), 409, "auth.2fa_not_enabled")


@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"auth.2fa": "2/60"}}])
async def test_2fa_endpoints_share_the_auth_2fa_bucket(client, accounts):
    a = await accounts.register("alice")
    assert (await client.post(SETUP, headers=a.headers)).status_code == 200
    r = await client.post(ENABLE, json={"totp_code": "abcdef"}, headers=a.headers)
    assert_error(r, 401, "auth.invalid_code")
    r = await client.post(SETUP, headers=a.headers)
    err = assert_error(r, 429, "rate_limited")
    assert err["bucket"] == "auth.2fa"
    # The bucket is per user: another account is not affected.
    b = await accounts.register("bob")
    assert (await client.post(SETUP, headers=b.headers)).status_code == 200


async def test_two_enables_at_once_one_wins(client, accounts, clock):
    """The same valid code sent twice at once: one answer carries the backup codes, the other 409."""
    import asyncio

    a = await accounts.register("racer")
    setup = (await client.post("/api/v1/auth/2fa/setup", headers=a.headers)).json()
    code = totp_code(setup["secret"], clock)
    answers = await asyncio.gather(*(client.post("/api/v1/auth/2fa/enable", json={"totp_code": code},
                                                 headers=a.headers) for _ in range(2)))
    statuses = sorted(r.status_code for r in answers)
    assert statuses[0] == 200, [r.text for r in answers]
    assert statuses[1] in (401, 409)  # the code was used, or the second saw 2FA already on

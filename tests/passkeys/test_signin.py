"""Passkey sign-in without a password (OpenAPI: passkeyLoginOptions, passkeyLoginVerify; docs/passkeys.md):
discoverable and email-restricted ceremonies, the session it opens, and every refusal."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import select, update

from meadhall.db.schema import passkeys, users
from tests.support.accounts import bearer, enable_2fa
from tests.support.http import assert_error
from tests.support.passkeys import (
    LOGIN_OPTIONS,
    add_passkey,
    login_options,
    login_verify,
    passkey_login,
    security_events_of,
)
from tests.support.webauthn import Authenticator


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    # Many ceremonies per test: the auth.passkey bucket is tested in test_ceremonies.py.
    return {"RATE_LIMITS": {"auth.passkey": "1000/60"}}


async def with_passkey(client: Any, accounts: Any, username: str = "alice", **kw: Any) -> tuple[Any, Authenticator]:
    account = await accounts.register(username)
    key = Authenticator(**kw)
    await add_passkey(client, account, key)
    return account, key


async def test_discoverable_sign_in(client, accounts, rt):
    a, key = await with_passkey(client, accounts)
    ceremony = await login_options(client)
    assert set(ceremony) == {"ceremony_id", "options"}
    options = ceremony["options"]
    assert options["rpId"] == "localhost" and options["allowCredentials"] == []
    assert options["userVerification"] == "preferred" and options["timeout"] == 300000
    r = await client.post("/api/v1/auth/passkeys/login/verify",
                          json={"ceremony_id": ceremony["ceremony_id"], "credential": key.get(options)})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"user", "token", "session", "totp_enabled"}
    assert body["user"]["id"] == a["user"]["id"] and body["session"]["method"] == "passkey"
    assert body["session"]["step_up_expires_at"] is not None
    assert r.headers["cache-control"] == "no-store" and "__Host-session=" in r.headers["set-cookie"]
    client.cookies.clear()
    me = await client.get("/api/v1/users/@me", headers=bearer(body["token"]))
    assert me.json()["user"]["username"] == "alice"
    listed = (await client.get("/api/v1/auth/passkeys", headers=a.headers)).json()["passkeys"]
    assert listed[0]["last_used_at"] is not None
    assert await security_events_of(rt, "passkey.login") == [(int(a["user"]["id"]), {"passkey_id": listed[0]["id"]})]


async def test_no_body_is_discoverable(client, accounts):
    _, key = await with_passkey(client, accounts)
    r = await client.post(LOGIN_OPTIONS)
    assert r.status_code == 200, r.text
    ceremony = r.json()
    assert (await login_verify(client, ceremony["ceremony_id"], key.get(ceremony["options"]))).status_code == 200


async def test_email_restricted_sign_in(client, accounts):
    a, key = await with_passkey(client, accounts)
    await add_passkey(client, a, key)
    ceremony = await login_options(client, "ALICE@example.com")
    # The keys are not named: the browser offers its resident keys and verify checks the account.
    assert ceremony["options"]["allowCredentials"] == []
    r = await login_verify(client, ceremony["ceremony_id"], key.get(ceremony["options"]))
    assert r.status_code == 200 and r.json()["user"]["id"] == a["user"]["id"]


def shape(options: dict[str, Any]) -> dict[str, Any]:
    """The options without their random challenge."""
    return {k: v for k, v in options.items() if k != "challenge"}


async def test_options_never_disclose_an_account_or_its_keys(client, accounts):
    """A known email with passkeys, a known email without and an unknown email answer alike (docs/passkeys.md): no credential id, nothing that tells them apart."""
    _, key = await with_passkey(client, accounts, "alice")
    await accounts.register("bob")
    answers = [await login_options(client, email) for email in
               ("alice@example.com", "bob@example.com", "nobody@example.com", None)]
    assert [shape(a["options"]) for a in answers] == [shape(answers[-1]["options"])] * 4
    assert all(a["options"]["allowCredentials"] == [] for a in answers)
    texts = [str(a) for a in answers]
    assert not any(c.id_b64 in t for c in key.credentials for t in texts)


async def test_unknown_email_answers_like_none(client, accounts):
    _, key = await with_passkey(client, accounts)
    ceremony = await login_options(client, "nobody@example.com")
    plain = await login_options(client)
    assert set(ceremony["options"]) == set(plain["options"])
    assert ceremony["options"]["allowCredentials"] == [] == plain["options"]["allowCredentials"]
    # No account behind it: no key signs in under it.
    r = await login_verify(client, ceremony["ceremony_id"], key.get(plain["options"]))
    assert_error(r, 401, "auth.passkey_failed")


async def test_another_accounts_key_under_an_email(client, accounts, rt):
    a, _ = await with_passkey(client, accounts, "alice")
    b, bob_key = await with_passkey(client, accounts, "bob")
    ceremony = await login_options(client, "alice@example.com")
    r = await login_verify(client, ceremony["ceremony_id"], bob_key.get(ceremony["options"],
                                                                         credential=bob_key.credentials[0]))
    assert_error(r, 401, "auth.passkey_failed")
    assert await security_events_of(rt, "login.failure") == [(int(b["user"]["id"]), {"reason": "passkey_failed"})]


async def test_ceremony_is_single_use(client, accounts):
    _, key = await with_passkey(client, accounts)
    ceremony = await login_options(client)
    assert (await login_verify(client, ceremony["ceremony_id"], key.get(ceremony["options"]))).status_code == 200
    again = key.get(ceremony["options"])
    assert_error(await login_verify(client, ceremony["ceremony_id"], again), 401, "auth.ceremony_invalid")


async def test_refused_attempt_uses_the_ceremony_up(client, accounts):
    _, key = await with_passkey(client, accounts)
    ceremony = await login_options(client)
    bad = key.get(ceremony["options"], bad_signature=True)
    assert_error(await login_verify(client, ceremony["ceremony_id"], bad), 401, "auth.passkey_failed")
    good = key.get(ceremony["options"])
    assert_error(await login_verify(client, ceremony["ceremony_id"], good), 401, "auth.ceremony_invalid")


async def test_expired_ceremony(client, accounts, clock):
    _, key = await with_passkey(client, accounts)
    ceremony = await login_options(client)
    clock.advance(299)
    fresh = await login_options(client)
    clock.advance(2)
    r = await login_verify(client, ceremony["ceremony_id"], key.get(ceremony["options"]))
    assert_error(r, 401, "auth.ceremony_invalid")
    assert (await login_verify(client, fresh["ceremony_id"], key.get(fresh["options"]))).status_code == 200


async def test_registration_ceremony_is_not_a_sign_in(client, accounts):
    a, key = await with_passkey(client, accounts)
    r = await client.post("/api/v1/auth/passkeys/register/options", headers=a.headers)
    ceremony = r.json()
    options = {"challenge": ceremony["options"]["challenge"], "rpId": "localhost", "allowCredentials": []}
    assert_error(await login_verify(client, ceremony["ceremony_id"], key.get(options)), 401, "auth.ceremony_invalid")


@pytest.mark.parametrize("misbehaviour", [
    {"origin": "https://evil.example"}, {"rp_id": "evil.example"}, {"present": False}, {"bad_signature": True},
    {"user_handle": b"someone else"},
])
async def test_refused_answers(client, accounts, rt, misbehaviour):
    a, key = await with_passkey(client, accounts)
    assert_error(await passkey_login(client, key, **misbehaviour), 401, "auth.passkey_failed")
    assert await security_events_of(rt, "login.failure") == [(int(a["user"]["id"]), {"reason": "passkey_failed"})]
    assert await security_events_of(rt, "passkey.login") == []


async def test_unknown_credential(client, accounts, rt):
    await with_passkey(client, accounts)
    stranger = Authenticator()
    options = (await login_options(client))["options"]
    stranger.create({"rp": {"id": "localhost"}, "user": {"id": "AAAA"}, "challenge": options["challenge"]})
    r = await passkey_login(client, stranger)
    assert_error(r, 401, "auth.passkey_failed")
    assert await security_events_of(rt, "login.failure") == [(None, {"reason": "passkey_failed"})]


async def test_revoked_passkey_no_longer_signs_in(client, accounts):
    a, key = await with_passkey(client, accounts)
    passkey_id = (await client.get("/api/v1/auth/passkeys", headers=a.headers)).json()["passkeys"][0]["id"]
    assert (await client.delete(f"/api/v1/auth/passkeys/{passkey_id}", headers=a.headers)).status_code == 204
    assert_error(await passkey_login(client, key), 401, "auth.passkey_failed")


async def test_counter_must_increase(client, accounts, rt):
    _, key = await with_passkey(client, accounts)
    assert (await passkey_login(client, key)).status_code == 200  # counter 1
    assert (await passkey_login(client, key, sign_count=5)).status_code == 200
    # A clone that has not seen the last uses: same or lower counter.
    assert_error(await passkey_login(client, key, sign_count=5), 401, "auth.passkey_failed")
    assert_error(await passkey_login(client, key, sign_count=3), 401, "auth.passkey_failed")
    assert (await passkey_login(client, key, sign_count=6)).status_code == 200
    async with rt.read() as uow:
        assert (await uow.conn.execute(select(passkeys.c.sign_count))).scalar_one() == 6


async def test_authenticator_without_a_counter(client, accounts):
    _, key = await with_passkey(client, accounts, counter=False)
    for _ in range(3):
        assert (await passkey_login(client, key)).status_code == 200
    # Once a counter was seen, falling back to zero is refused (the stored one is non-zero).
    assert (await passkey_login(client, key, sign_count=4)).status_code == 200
    assert_error(await passkey_login(client, key, sign_count=0), 401, "auth.passkey_failed")


async def test_banned_user(client, accounts, rt):
    a, key = await with_passkey(client, accounts)
    async with rt.uow() as uow:
        await uow.conn.execute(update(users).where(users.c.id == int(a["user"]["id"])).values(banned_at=uow.now))
    assert_error(await passkey_login(client, key), 403, "user.banned")
    assert await security_events_of(rt, "login.failure") == [(int(a["user"]["id"]), {"reason": "banned"})]


async def test_administrator_without_totp_is_sent_to_enrol(client, accounts, rt):
    a, key = await with_passkey(client, accounts)
    async with rt.uow() as uow:
        await uow.conn.execute(update(users).where(users.c.id == int(a["user"]["id"])).values(is_instance_admin=True))
    body = assert_error(await passkey_login(client, key), 403, "auth.2fa_enrollment_required")
    assert body["hint"] == "meadhall totp-setup --email alice@example.com"


async def test_administrator_with_totp_signs_in_without_a_code(client, accounts, rt, clock):
    a, key = await with_passkey(client, accounts)
    await enable_2fa(client, a, clock)
    async with rt.uow() as uow:
        await uow.conn.execute(update(users).where(users.c.id == int(a["user"]["id"])).values(is_instance_admin=True))
    r = await passkey_login(client, key)
    assert r.status_code == 200, r.text
    token = r.json()["token"]
    me = await client.get("/api/v1/users/@me", headers=bearer(token))
    assert me.status_code == 200 and me.json()["user"]["is_instance_admin"] is True


async def test_user_with_totp_is_not_asked_for_a_code(client, accounts, clock):
    a, key = await with_passkey(client, accounts)
    await enable_2fa(client, a, clock)
    r = await passkey_login(client, key)
    assert r.status_code == 200 and r.json()["totp_enabled"] is True


async def test_failures_count_towards_the_address_lockout_only(client, accounts, rt):
    a, key = await with_passkey(client, accounts)
    for _ in range(6):
        assert_error(await passkey_login(client, key, bad_signature=True), 401, "auth.passkey_failed")
    # Five failures would lock a login value: the account still signs in with its password and passkey.
    r = await client.post("/api/v1/auth/login", json={"login": "alice", "password": a["password"]})
    client.cookies.clear()
    assert r.status_code == 200, r.text
    assert (await passkey_login(client, key)).status_code == 200
    for _ in range(50 - 6):
        await passkey_login(client, key, bad_signature=True)
    r = await passkey_login(client, key)
    assert_error(r, 429, "rate_limited")
    assert r.json()["error"]["bucket"] == "auth.lockout"


async def test_two_sign_ins_with_one_counter_value(client, accounts):
    _, key = await with_passkey(client, accounts)
    first, second = await login_options(client), await login_options(client)
    answers = [key.get(c["options"], sign_count=7) for c in (first, second)]
    results = await asyncio.gather(login_verify(client, first["ceremony_id"], answers[0]),
                                   login_verify(client, second["ceremony_id"], answers[1]))
    assert sorted(r.status_code for r in results) == [200, 401]

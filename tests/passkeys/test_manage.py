"""Passkey management (OpenAPI: listPasskeys, renamePasskey, revokePasskey) and step-up by passkey
(OpenAPI: stepUp; docs/passkeys.md)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.support.http import assert_error
from tests.support.passkeys import PASSKEYS, STEP_UP, add_passkey, login_options, security_events_of
from tests.support.shapes import parse_ts
from tests.support.webauthn import Authenticator


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"RATE_LIMITS": {"auth.passkey": "1000/60"}}


async def test_list_only_own_passkeys(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    first = await add_passkey(client, a, Authenticator(), name="Phone")
    second = await add_passkey(client, a, Authenticator(), name="Key")
    await add_passkey(client, b, Authenticator())
    assert (await client.get(PASSKEYS, headers=a.headers)).json() == {"passkeys": [first, second]}
    assert len((await client.get(PASSKEYS, headers=b.headers)).json()["passkeys"]) == 1
    assert (await client.get(PASSKEYS)).status_code == 401


async def test_rename(client, accounts, rt, clock):
    a = await accounts.register("alice")
    passkey = await add_passkey(client, a, Authenticator())
    r = await client.patch(f"{PASSKEYS}/{passkey['id']}", json={"name": "Work laptop"}, headers=a.headers)
    assert r.status_code == 200, r.text
    assert r.json() == {"passkey": {**passkey, "name": "Work laptop"}}
    assert await security_events_of(rt, "passkey.rename") == [(int(a["user"]["id"]), {"passkey_id": passkey["id"]})]
    for bad in ("", "   ", "x" * 65, "two\nlines"):
        r = await client.patch(f"{PASSKEYS}/{passkey['id']}", json={"name": bad}, headers=a.headers)
        assert_error(r, 422, "validation.failed")
    clock.advance(601)
    r = await client.patch(f"{PASSKEYS}/{passkey['id']}", json={"name": "Other"}, headers=a.headers)
    assert_error(r, 403, "auth.step_up_required")


async def test_revoke(client, accounts, rt, clock):
    a = await accounts.register("alice")
    keep = await add_passkey(client, a, Authenticator())
    gone = await add_passkey(client, a, Authenticator())
    assert (await client.delete(f"{PASSKEYS}/{gone['id']}", headers=a.headers)).status_code == 204
    assert (await client.get(PASSKEYS, headers=a.headers)).json()["passkeys"] == [keep]
    assert await security_events_of(rt, "passkey.revoke") == [(int(a["user"]["id"]), {"passkey_id": gone["id"]})]
    assert_error(await client.delete(f"{PASSKEYS}/{gone['id']}", headers=a.headers), 404, "passkey.not_found")
    clock.advance(601)
    assert_error(await client.delete(f"{PASSKEYS}/{keep['id']}", headers=a.headers), 403, "auth.step_up_required")


async def test_another_accounts_passkey_is_not_found(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    passkey = await add_passkey(client, a, Authenticator())
    for path in (f"{PASSKEYS}/{passkey['id']}", f"{PASSKEYS}/123", f"{PASSKEYS}/not-an-id"):
        assert_error(await client.patch(path, json={"name": "Mine"}, headers=b.headers), 404, "passkey.not_found")
        assert_error(await client.delete(path, headers=b.headers), 404, "passkey.not_found")
    assert len((await client.get(PASSKEYS, headers=a.headers)).json()["passkeys"]) == 1


# ---- step-up by passkey --------------------------------------------------------------------------


async def step_up_with(client: Any, account: Any, key: Authenticator, **get: Any) -> Any:
    ceremony = await login_options(client)
    credential = key.get(ceremony["options"], **get)
    return await client.post(STEP_UP, json={"ceremony_id": ceremony["ceremony_id"], "credential": credential},
                             headers=account.headers)


async def test_step_up_by_passkey(client, accounts, rt, clock):
    a = await accounts.register("alice")
    key = Authenticator()
    await add_passkey(client, a, key)
    clock.advance(3600)
    assert_error(await client.post(f"{PASSKEYS}/register/options", headers=a.headers), 403, "auth.step_up_required")
    r = await step_up_with(client, a, key)
    assert r.status_code == 200, r.text
    assert abs(parse_ts(r.json()["step_up_expires_at"]) - (clock.now() + timedelta(minutes=10))) \
        < timedelta(milliseconds=2)
    assert (await client.post(f"{PASSKEYS}/register/options", headers=a.headers)).status_code == 200
    assert [u for u, _ in await security_events_of(rt, "step_up.success")] == [int(a["user"]["id"])]


async def test_step_up_with_another_accounts_passkey(client, accounts, rt, clock):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    bob_key = Authenticator()
    await add_passkey(client, b, bob_key)
    clock.advance(3600)
    assert_error(await step_up_with(client, a, bob_key), 401, "auth.passkey_failed")
    assert_error(await client.post(f"{PASSKEYS}/register/options", headers=a.headers), 403, "auth.step_up_required")
    assert await security_events_of(rt, "step_up.failure") == [(int(a["user"]["id"]), {"reason": "auth.passkey_failed"})]


async def test_step_up_ceremony_is_single_use_and_checked(client, accounts, clock):
    a = await accounts.register("alice")
    key = Authenticator()
    await add_passkey(client, a, key)
    clock.advance(3600)
    ceremony = await login_options(client)
    body = {"ceremony_id": ceremony["ceremony_id"], "credential": key.get(ceremony["options"], bad_signature=True)}
    assert_error(await client.post(STEP_UP, json=body, headers=a.headers), 401, "auth.passkey_failed")
    body["credential"] = key.get(ceremony["options"])
    assert_error(await client.post(STEP_UP, json=body, headers=a.headers), 401, "auth.ceremony_invalid")
    assert_error(await step_up_with(client, a, key, origin="https://evil.example"), 401, "auth.passkey_failed")


async def test_step_up_body_needs_a_password_or_a_passkey(client, accounts):
    a = await accounts.register("alice")
    for body in ({}, {"ceremony_id": "abc"}, {"credential": {}}, {"totp_code": "123456"}):
        assert_error(await client.post(STEP_UP, json=body, headers=a.headers), 422, "validation.failed")
    assert (await client.post(STEP_UP, json={"password": a["password"]}, headers=a.headers)).status_code == 200

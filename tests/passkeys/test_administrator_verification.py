"""An administrator's passkey must verify its user (docs/passkeys.md): a passkey
sign-in or step-up of an instance administrator whose assertion lacks the UV flag (a found security key
without its PIN) answers 401 `auth.passkey_uv_required`, opens no session, steps nothing up and uses its
ceremony; other accounts keep UV `preferred`, not required."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from meadhall.db.schema import sessions
from tests.support.admin import admin_account
from tests.support.http import assert_error
from tests.support.passkeys import (
    PASSKEYS,
    STEP_UP,
    add_passkey,
    login_options,
    login_verify,
    passkey_login,
    security_events_of,
)
from tests.support.webauthn import Authenticator


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"RATE_LIMITS": {"auth.passkey": "1000/60"}}


async def session_count(rt: Any, account: Any) -> int:
    async with rt.read() as uow:
        return int((await uow.conn.execute(select(func.count()).select_from(sessions)
                                           .where(sessions.c.user_id == int(account["user"]["id"])))).scalar_one())


async def administrator_with_key(client: Any, accounts: Any, rt: Any) -> tuple[Any, Authenticator]:
    admin = await admin_account(client, accounts, rt, "root")
    key = Authenticator(verifies=False)  # a security key without a PIN
    await add_passkey(client, admin, key)
    return admin, key


async def step_up_with(client: Any, account: Any, key: Authenticator, **get: Any) -> Any:
    ceremony = await login_options(client)
    credential = key.get(ceremony["options"], **get)
    return await client.post(STEP_UP, json={"ceremony_id": ceremony["ceremony_id"], "credential": credential},
                             headers=account.headers)


async def test_administrator_sign_in_without_user_verification_is_refused(client, accounts, rt):
    admin, key = await administrator_with_key(client, accounts, rt)
    before = await session_count(rt, admin)
    ceremony = await login_options(client)
    r = await login_verify(client, ceremony["ceremony_id"], key.get(ceremony["options"]))
    body = assert_error(r, 401, "auth.passkey_uv_required")
    assert "token" not in body and "set-cookie" not in r.headers
    assert await session_count(rt, admin) == before
    assert await security_events_of(rt, "login.failure") == [(int(admin["user"]["id"]), {"reason": "passkey_uv_required"})]
    assert await security_events_of(rt, "passkey.login") == []
    # The refused attempt used its ceremony up: the same challenge answered with UV is refused too.
    again = key.get(ceremony["options"], verified=True)
    assert_error(await login_verify(client, ceremony["ceremony_id"], again), 401, "auth.ceremony_invalid")
    # Under an email the rule is the same.
    assert_error(await passkey_login(client, key, admin["user"]["email"]), 401, "auth.passkey_uv_required")
    assert await session_count(rt, admin) == before


async def test_administrator_sign_in_with_user_verification(client, accounts, rt):
    admin, key = await administrator_with_key(client, accounts, rt)
    r = await passkey_login(client, key, verified=True)
    assert r.status_code == 200, r.text
    assert r.json()["user"]["id"] == admin["user"]["id"] and r.json()["user"]["is_instance_admin"] is True


async def test_member_signs_in_without_user_verification(client, accounts):
    member = await accounts.register("alice")
    key = Authenticator(verifies=False)
    await add_passkey(client, member, key)
    r = await passkey_login(client, key)
    assert r.status_code == 200, r.text
    assert r.json()["user"]["id"] == member["user"]["id"]


async def test_administrator_step_up_without_user_verification_is_refused(client, accounts, rt, clock):
    admin, key = await administrator_with_key(client, accounts, rt)
    clock.advance(601)  # the sign-in's step-up has lapsed
    assert_error(await client.post(f"{PASSKEYS}/register/options", headers=admin.headers),
                 403, "auth.step_up_required")
    assert_error(await step_up_with(client, admin, key), 401, "auth.passkey_uv_required")
    assert_error(await client.post(f"{PASSKEYS}/register/options", headers=admin.headers),
                 403, "auth.step_up_required")
    assert await security_events_of(rt, "step_up.failure") == [
        (int(admin["user"]["id"]), {"reason": "auth.passkey_uv_required"})]
    r = await step_up_with(client, admin, key, verified=True)
    assert r.status_code == 200, r.text
    assert (await client.post(f"{PASSKEYS}/register/options", headers=admin.headers)).status_code == 200


async def test_member_steps_up_without_user_verification(client, accounts, clock):
    member = await accounts.register("alice")
    key = Authenticator(verifies=False)
    await add_passkey(client, member, key)
    clock.advance(3600)
    r = await step_up_with(client, member, key)
    assert r.status_code == 200, r.text

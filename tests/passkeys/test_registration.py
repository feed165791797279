"""Passkey registration (OpenAPI: passkeyRegisterOptions, passkeyRegisterVerify; docs/passkeys.md): the
options a browser gets, a software authenticator's answer verified, and every refusal."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from meadhall.db.schema import passkeys, security_events
from tests.support.http import assert_error
from tests.support.passkeys import (
    PASSKEYS,
    REGISTER_OPTIONS,
    REGISTER_VERIFY,
    add_passkey,
    register_options,
)
from tests.support.shapes import parse_ts
from tests.support.webauthn import Authenticator


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    # Many ceremonies per test: the auth.passkey bucket is tested in test_ceremonies.py.
    return {"RATE_LIMITS": {"auth.passkey": "1000/60"}}


async def verify(client: Any, account: Any, ceremony_id: str, credential: dict[str, Any], **extra: Any) -> Any:
    return await client.post(REGISTER_VERIFY, json={"ceremony_id": ceremony_id, "credential": credential, **extra},
                             headers=account.headers)


async def test_registration_options(client, accounts):
    a = await accounts.register("alice")
    body = await register_options(client, a)
    assert set(body) == {"ceremony_id", "options"}
    o = body["options"]
    assert o["rp"] == {"id": "localhost", "name": "localhost"}
    assert o["user"]["name"] == "alice" and o["user"]["displayName"] == "alice"
    assert o["attestation"] == "none" and o["timeout"] == 300000
    assert o["authenticatorSelection"]["residentKey"] == "preferred"
    assert o["authenticatorSelection"]["userVerification"] == "preferred"
    assert [p["alg"] for p in o["pubKeyCredParams"]] == [-7, -257]
    assert o["excludeCredentials"] == []
    assert len(o["challenge"]) >= 43


async def test_register_a_passkey(client, accounts, clock, rt):
    a = await accounts.register("alice")
    key = Authenticator()
    passkey = await add_passkey(client, a, key, name="  Laptop  ")
    assert set(passkey) == {"id", "name", "created_at", "last_used_at", "backed_up"}
    assert passkey["name"] == "Laptop" and passkey["last_used_at"] is None and passkey["backed_up"] is False
    assert abs(parse_ts(passkey["created_at"]) - clock.now()) < timedelta(milliseconds=1)
    listed = (await client.get(PASSKEYS, headers=a.headers)).json()
    assert listed == {"passkeys": [passkey]}
    async with rt.read() as uow:
        row = (await uow.conn.execute(select(passkeys))).one()._mapping
        events = (await uow.conn.execute(select(security_events.c.type, security_events.c.data)
                                         .where(security_events.c.type == "passkey.register"))).all()
    assert row["credential_id"] == key.credentials[0].id_b64 and row["transports"] == ["internal"]
    assert [tuple(e) for e in events] == [("passkey.register", {"passkey_id": passkey["id"]})]
    # The second key's options exclude the first, and share the account's user handle.
    second = await register_options(client, a)
    assert [c["id"] for c in second["options"]["excludeCredentials"]] == [key.credentials[0].id_b64]
    assert second["options"]["user"]["id"] == (await register_options(client, a))["options"]["user"]["id"]


async def test_default_name_and_backup_state(client, accounts):
    a = await accounts.register("alice")
    passkey = await add_passkey(client, a, Authenticator(backed_up=True))
    assert passkey["name"] == "Passkey" and passkey["backed_up"] is True


async def test_registration_needs_step_up(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(400)
    ceremony = await register_options(client, a)
    clock.advance(201)  # the sign-in's step-up is over, the ceremony still alive
    assert_error(await client.post(REGISTER_OPTIONS, headers=a.headers), 403, "auth.step_up_required")
    r = await verify(client, a, ceremony["ceremony_id"], Authenticator().create(ceremony["options"]))
    assert_error(r, 403, "auth.step_up_required")
    assert (await client.get(PASSKEYS, headers=a.headers)).json()["passkeys"] == []


async def test_ceremony_is_single_use(client, accounts):
    a = await accounts.register("alice")
    ceremony = await register_options(client, a)
    key = Authenticator()
    credential = key.create(ceremony["options"])
    assert (await verify(client, a, ceremony["ceremony_id"], credential)).status_code == 201
    assert_error(await verify(client, a, ceremony["ceremony_id"], credential), 401, "auth.ceremony_invalid")


async def test_refused_attempt_uses_the_ceremony_up(client, accounts):
    a = await accounts.register("alice")
    ceremony = await register_options(client, a)
    key = Authenticator()
    wrong = key.create(ceremony["options"], origin="https://evil.example")
    assert_error(await verify(client, a, ceremony["ceremony_id"], wrong), 401, "auth.passkey_failed")
    right = key.create(ceremony["options"])
    assert_error(await verify(client, a, ceremony["ceremony_id"], right), 401, "auth.ceremony_invalid")


async def test_expired_ceremony(client, accounts, clock):
    a = await accounts.register("alice")
    ceremony = await register_options(client, a)
    clock.advance(301)
    # Stepped up again so that only the ceremony's age refuses.
    r = await client.post("/api/v1/auth/step-up", json={"password": a["password"]}, headers=a.headers)
    assert r.status_code == 200, r.text
    r = await verify(client, a, ceremony["ceremony_id"], Authenticator().create(ceremony["options"]))
    assert_error(r, 401, "auth.ceremony_invalid")


async def test_ceremony_of_another_account(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    ceremony = await register_options(client, a)
    r = await verify(client, b, ceremony["ceremony_id"], Authenticator().create(ceremony["options"]))
    assert_error(r, 401, "auth.ceremony_invalid")


@pytest.mark.parametrize("misbehaviour", [
    {"origin": "https://evil.example"}, {"origin": "http://localhost:8001"}, {"rp_id": "evil.example"},
    {"present": False},
])
async def test_refused_answers(client, accounts, misbehaviour):
    a = await accounts.register("alice")
    ceremony = await register_options(client, a)
    credential = Authenticator().create(ceremony["options"], **misbehaviour)
    assert_error(await verify(client, a, ceremony["ceremony_id"], credential), 401, "auth.passkey_failed")


async def test_malformed_credential(client, accounts):
    a = await accounts.register("alice")
    ceremony = await register_options(client, a)
    r = await verify(client, a, ceremony["ceremony_id"], {"id": "x", "response": {"clientDataJSON": "!!"}})
    assert_error(r, 401, "auth.passkey_failed")


async def test_same_credential_twice(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    key = Authenticator()
    first = await register_options(client, a)
    credential = key.create(first["options"])
    assert (await verify(client, a, first["ceremony_id"], credential)).status_code == 201
    # The same answer replayed into a new ceremony fails on its challenge.
    second = await register_options(client, a)
    assert_error(await verify(client, a, second["ceremony_id"], credential), 401, "auth.passkey_failed")
    # A new answer under an existing credential id is refused, for the same account or another.
    for account in (a, b):
        ceremony = await register_options(client, account)
        again = key.create(ceremony["options"], credential_id=key.credentials[0].id)
        assert_error(await verify(client, account, ceremony["ceremony_id"], again), 409, "passkey.already_registered")


async def test_at_most_ten_passkeys(client, accounts):
    a = await accounts.register("alice")
    key = Authenticator()
    pending = await register_options(client, a)
    for _ in range(10):
        await add_passkey(client, a, key)
    assert_error(await client.post(REGISTER_OPTIONS, headers=a.headers), 409, "passkey.limit_reached")
    # A ceremony started before the tenth is refused at verification too.
    r = await verify(client, a, pending["ceremony_id"], key.create(pending["options"]))
    assert_error(r, 409, "passkey.limit_reached")
    assert len((await client.get(PASSKEYS, headers=a.headers)).json()["passkeys"]) == 10

"""Administrators need their second factor (docs/operations.md): granting instance administration, and
resetting an administrator's TOTP, delete every session of that user, so their connections get
SESSION_INVALIDATED (`admin_action`), then close 4010. Removing administration, and resetting the TOTP
of someone who is no administrator, leave sessions and connections alone."""

from __future__ import annotations

import pyotp

from meadhall.accounts import admin_ops
from tests.support.delivery import online, refused, second_device
from tests.support.factories import make_admin
from tests.support.http import API


async def assert_invalidated(conn, session_id: str) -> None:
    d = await conn.dispatch("SESSION_INVALIDATED")
    assert d == {"reason": "admin_action", "session_id": session_id}
    assert await conn.wait_closed() == 4010


async def test_admin_grant_ends_every_connection_of_the_grantee(gateway, client, accounts, rt):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    phone = await second_device(client, alice)
    a1, a2, b = await online(gateway, client, alice, phone, bob)
    await admin_ops.make_admin(rt, "alice@example.com")
    await assert_invalidated(a1, alice["session"]["id"])
    await assert_invalidated(a2, phone["session"]["id"])
    for token in (alice["token"], phone["token"]):
        r = await client.get(f"{API}/users/@me", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 401
    await refused(client, bob, b)
    assert b.closed_code is None


async def test_admin_removal_ends_no_connection(gateway, client, accounts, rt):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    await make_admin(rt, alice)
    await make_admin(rt, bob)
    (a,) = await online(gateway, client, alice)
    await admin_ops.remove_admin(rt, "alice@example.com")
    assert (await a.dispatch("USER_UPDATE"))["is_instance_admin"] is False
    await refused(client, alice, a, only=["SESSION_INVALIDATED"])
    assert a.closed_code is None


async def test_totp_reset_of_an_administrator_ends_their_connections(gateway, client, accounts, rt):
    alice = await accounts.register("alice")
    await admin_ops.make_admin(rt, "alice@example.com")
    secret = (await admin_ops.totp_setup(rt, "alice@example.com", force=False))["secret"]
    r = await client.post(f"{API}/auth/login", json={"login": "alice", "password": alice["password"],
                                                     "totp_code": pyotp.TOTP(secret).at(rt.clock.now())})
    client.cookies.clear()
    assert r.status_code == 200, r.text
    admin = type(alice)(token=r.json()["token"], user=r.json()["user"], password=alice["password"],
                        session=r.json()["session"])
    (a,) = await online(gateway, client, admin)
    await admin_ops.totp_reset(rt, "alice@example.com")
    await assert_invalidated(a, admin["session"]["id"])
    assert (await client.get(f"{API}/users/@me", headers=admin.headers)).status_code == 401


async def test_totp_reset_of_a_non_administrator_ends_no_connection(gateway, client, accounts, rt):
    alice = await accounts.register("alice")
    await admin_ops.totp_setup(rt, "alice@example.com", force=False)
    (a,) = await online(gateway, client, alice)
    await admin_ops.totp_reset(rt, "alice@example.com")
    assert (await a.dispatch("USER_UPDATE"))["totp_enabled"] is False
    await refused(client, alice, a, only=["SESSION_INVALIDATED"])
    assert a.closed_code is None
    assert (await client.get(f"{API}/users/@me", headers=alice.headers)).status_code == 200

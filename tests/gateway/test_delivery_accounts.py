"""A user's own events over a real WebSocket (docs/reference/events.md): USER_UPDATE to every connection of that user
and no one else; READ_STATE_UPDATE to the user's other sessions, never to the connections of the session that
acknowledged; SESSION_INVALIDATED only to the connections of the revoked session."""

from __future__ import annotations

from meadhall.accounts import admin_ops
from tests.support.accounts import DISABLE, enable_2fa, next_code
from tests.support.delivery import online, refused, second_device, seen, until
from tests.support.factories import make_admin
from tests.support.http import API
from tests.support.messages import post
from tests.support.personas import hall
from tests.support.shapes import READ_STATE_FIELDS, USER_FIELDS, is_id


async def test_profile_change_reaches_every_device_of_that_user_only(gateway, client, accounts):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    phone = await second_device(client, alice)
    a1, a2, a3, b = await online(gateway, client, alice, alice, phone, bob)
    r = await client.patch(f"{API}/users/@me", json={"display_name": "Alice A.", "bio": "hi"}, headers=alice.headers)
    assert r.status_code == 200, r.text
    for conn in (a1, a2, a3):
        got = await conn.dispatch("USER_UPDATE")
        assert set(got) == USER_FIELDS, set(got) ^ USER_FIELDS  # the private User itself, not wrapped
        assert {k: v for k, v in got.items() if k != "last_seen_at"} == {
            k: v for k, v in r.json()["user"].items() if k != "last_seen_at"}
        assert got["id"] == alice.id and got["display_name"] == "Alice A." and got["email"] == "alice@example.com"
    await refused(client, bob, b)


async def test_a_guild_mate_does_not_receive_the_private_user(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    a, b = await online(gateway, client, h.a, h.b)
    r = await client.patch(f"{API}/users/@me", json={"locale": "de", "timezone": "Europe/Berlin"},
                           headers=h.a.headers)
    assert r.status_code == 200, r.text
    assert (await a.dispatch("USER_UPDATE"))["timezone"] == "Europe/Berlin"
    await refused(client, h.b, b, only=["USER_UPDATE"])


async def test_onboarding_completion_sends_user_update(gateway, client, accounts):
    alice = await accounts.register("alice")
    (a,) = await online(gateway, client, alice)
    r = await client.post(f"{API}/users/@me/onboarding/complete", json={"display_name": "Alice"},
                          headers=alice.headers)
    assert r.status_code == 200, r.text
    got = await a.dispatch("USER_UPDATE")
    assert got["onboarding_completed_at"] is not None and got == r.json()["user"] | {
        "last_seen_at": got["last_seen_at"]}


async def test_two_factor_on_and_off_send_user_update(gateway, client, accounts, clock):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    a, b = await online(gateway, client, alice, bob)
    secret, _ = await enable_2fa(client, alice, clock)
    assert (await a.dispatch("USER_UPDATE"))["totp_enabled"] is True
    r = await client.post(DISABLE, json={"totp_code": next_code(secret, clock)}, headers=alice.headers)
    assert r.status_code == 200, r.text
    assert (await a.dispatch("USER_UPDATE"))["totp_enabled"] is False
    await refused(client, bob, b)


async def test_admin_removal_by_the_cli_sends_user_update(gateway, client, accounts, rt):
    # A grant deletes the grantee's sessions instead (docs/operations.md): tests/gateway/test_admin_grant_sessions.py.
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    await make_admin(rt, alice)
    await make_admin(rt, bob)  # another administrator, so that alice's removal is allowed
    a, b = await online(gateway, client, alice, bob)
    await admin_ops.remove_admin(rt, "alice@example.com")
    got = await a.dispatch("USER_UPDATE")
    assert got["is_instance_admin"] is False and "instance_admin" not in got["badges"]
    await refused(client, bob, b)


async def test_two_factor_setup_and_reset_by_the_cli_send_user_update(gateway, client, accounts, rt):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    a, b = await online(gateway, client, alice, bob)
    await admin_ops.totp_setup(rt, "alice@example.com", force=False)
    assert (await a.dispatch("USER_UPDATE"))["totp_enabled"] is True
    await admin_ops.totp_reset(rt, "alice@example.com")
    assert (await a.dispatch("USER_UPDATE"))["totp_enabled"] is False
    await refused(client, bob, b)


# ---- READ_STATE_UPDATE ---------------------------------------------------------------------------------------------

async def test_read_state_update_reaches_the_other_sessions_but_not_the_acknowledging_one(
        gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    m = await post(client, h.owner, h.general, "read me")
    tablet = await second_device(client, h.a)
    here1, here2, there, b = await online(gateway, client, h.a, h.a, tablet, h.b)
    r = await client.post(f"{API}/channels/{h.general}/ack", json={"message_id": m["id"]}, headers=h.a.headers)
    assert r.status_code == 200, r.text
    got = await there.dispatch("READ_STATE_UPDATE")
    assert set(got) == READ_STATE_FIELDS and got == r.json()["read_state"]
    assert got["channel_id"] == h.general and got["last_read_message_id"] == m["id"] and got["mention_count"] == 0
    # Both connections of the acknowledging session are skipped (4.6), and no one else hears of it.
    await refused(client, h.a, here1, here2, only=["READ_STATE_UPDATE"])
    await refused(client, h.b, b, only=["READ_STATE_UPDATE"])


async def test_read_state_update_from_the_other_device_comes_back_the_other_way(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    tablet = await second_device(client, h.a)
    here, there = await online(gateway, client, h.a, tablet)
    m = await post(client, h.owner, h.general, f"<@{h.a.id}> look")
    r = await client.post(f"{API}/channels/{h.general}/ack", json={}, headers=tablet.headers)
    assert r.status_code == 200, r.text
    got = await until(here, "READ_STATE_UPDATE")
    assert got[-1][1]["last_read_message_id"] == m["id"] and got[-1][1]["mention_count"] == 0
    (rest,) = await seen(client, h.a, there)
    assert "READ_STATE_UPDATE" not in [t for t, _ in rest]


# ---- SESSION_INVALIDATED -------------------------------------------------------------------------------------------

async def test_session_invalidated_reaches_only_the_revoked_sessions_connections(gateway, client, accounts):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    phone = await second_device(client, alice)
    laptop1, laptop2, mobile, b = await online(gateway, client, alice, alice, phone, bob)
    r = await client.delete(f"{API}/auth/sessions/{phone['session']['id']}", headers=alice.headers)
    assert r.status_code == 204, r.text
    got = await mobile.dispatch("SESSION_INVALIDATED")
    assert got == {"reason": "revoked", "session_id": phone["session"]["id"]} and is_id(got["session_id"])
    assert await mobile.wait_closed() == 4010
    await refused(client, alice, laptop1, laptop2, only=["SESSION_INVALIDATED"])
    assert laptop1.closed_code is None and laptop2.closed_code is None
    await refused(client, bob, b)


async def test_public_profile_change_updates_the_member_in_every_guild(gateway, client, accounts, rt):
    from tests.support.delivery import check_member
    from tests.support.factories import add_member
    from tests.support.guilds import make_guild

    alice, bob, carol, dave = [await accounts.register(n) for n in ("alice", "bob", "carol", "dave")]
    hall_b = await make_guild(client, bob, "Bob Hall")
    hall_c = await make_guild(client, carol, "Carol Hall")
    await add_member(rt, hall_b["id"], alice)
    await add_member(rt, hall_c["id"], alice)
    b, c, d = await online(gateway, client, bob, carol, dave)
    r = await client.patch(f"{API}/users/@me", json={"display_name": "Alice the Bold"}, headers=alice.headers)
    assert r.status_code == 200, r.text
    got_b = await b.dispatch("MEMBER_UPDATE")
    check_member(got_b, hall_b["id"], alice.id)
    assert got_b["user"]["display_name"] == "Alice the Bold"
    got_c = await c.dispatch("MEMBER_UPDATE")
    assert got_c["guild_id"] == hall_c["id"] and got_c["user"]["display_name"] == "Alice the Bold"
    await refused(client, dave, d)  # shares no guild with Alice


async def test_private_profile_change_updates_no_member(gateway, client, accounts, rt):
    from tests.support.factories import add_member
    from tests.support.guilds import make_guild

    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    hall_b = await make_guild(client, bob, "Bob Hall")
    await add_member(rt, hall_b["id"], alice)
    [b] = await online(gateway, client, bob)
    r = await client.patch(f"{API}/users/@me", json={"timezone": "UTC"}, headers=alice.headers)
    assert r.status_code == 200, r.text
    await refused(client, bob, b, only=["MEMBER_UPDATE"])

"""A push subscription belongs to the session that made it (docs/push.md "Subscriptions end
with their session"): whatever ends that session ends its subscriptions, so the device stops receiving
message text; a banned or deleted account gets nothing. Each way a session ends is taken through HTTP or
the CLI, and seen as what the push service receives for a message sent afterwards."""

from __future__ import annotations

from typing import Any

import pytest

from meadhall.push.delivery import deliveries_of
from tests.support.accounts import another_device
from tests.support.admin import admin_account, user_url
from tests.support.conversations import group, open_dm
from tests.support.http import invalid
from tests.support.messages import post
from tests.support.outbound import Browser
from tests.support.personas import Account
from tests.support.push import pushed_after_a_message, subscribe

NEW_PASSWORD = "a brand new passphrase"


@pytest.fixture
async def pair(api: Any, client: Any, accounts: Any) -> tuple[Account, Account, dict[str, Any]]:
    """bob (the recipient) and alice (who writes to him) in a direct conversation."""
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    return alice, bob, await open_dm(api, alice, bob)


async def test_the_control_a_subscribed_device_receives_the_message(api, client, rt, push_service, pair):
    alice, bob, dm = pair
    await subscribe(api, bob, push_service, "/phone")

    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == ["/phone"]


async def test_logout_ends_that_sessions_subscriptions_only(api, client, rt, push_service, pair):
    alice, bob, dm = pair
    laptop = await another_device(client, bob)
    await subscribe(api, bob, push_service, "/phone")
    await subscribe(api, laptop, push_service, "/laptop")

    await api.post("/auth/logout", bob, expect=204)

    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == ["/laptop"]
    assert [s["endpoint"] for s in (await api.get("/push/subscriptions", laptop))["subscriptions"]] == [
        push_service.url("/laptop")]


async def test_logout_everywhere_ends_every_subscription(api, client, rt, push_service, pair):
    alice, bob, dm = pair
    laptop = await another_device(client, bob)
    await subscribe(api, bob, push_service, "/phone")
    await subscribe(api, laptop, push_service, "/laptop")

    await api.post("/auth/logout-all", laptop, expect=204)

    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == []


async def test_revoking_a_session_ends_its_subscriptions(api, client, rt, push_service, pair):
    alice, bob, dm = pair
    laptop = await another_device(client, bob)
    await subscribe(api, bob, push_service, "/phone")
    await subscribe(api, laptop, push_service, "/laptop")

    await api.delete(f"/auth/sessions/{bob['session']['id']}", laptop)

    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == ["/laptop"]


async def test_a_password_change_ends_the_other_sessions_subscriptions(api, client, rt, push_service, pair):
    alice, bob, dm = pair
    laptop = await another_device(client, bob)
    await subscribe(api, bob, push_service, "/phone")
    await subscribe(api, laptop, push_service, "/laptop")

    await api.post("/auth/step-up", laptop, json={"password": bob["password"]}, expect=200)
    await api.post("/auth/password", laptop, json={"new_password": NEW_PASSWORD}, expect=204)

    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == ["/laptop"]


async def test_a_password_reset_ends_every_subscription(api, client, rt, push_service, pair, cli):
    alice, bob, dm = pair
    await subscribe(api, bob, push_service, "/phone")

    r = await cli("reset-password", "--email", bob["user"]["email"])
    assert r.exit_code == 0, r.stderr

    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == []


async def test_the_sessions_an_administrator_ends_take_their_subscriptions(api, client, accounts, rt, push_service,
                                                                           pair):
    alice, bob, dm = pair
    admin = await admin_account(client, accounts, rt, "root")
    laptop = await another_device(client, bob)
    await subscribe(api, bob, push_service, "/phone")
    await subscribe(api, laptop, push_service, "/laptop")

    await api.delete(user_url(bob.id, f"/sessions/{bob['session']['id']}"), admin)
    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == ["/laptop"]

    await api.post(user_url(bob.id, "/logout-all"), admin, expect=204)
    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == []


async def test_a_temporary_password_ends_every_subscription(api, client, accounts, rt, push_service, pair):
    alice, bob, dm = pair
    admin = await admin_account(client, accounts, rt, "root")
    await subscribe(api, bob, push_service, "/phone")

    await api.post(user_url(bob.id, "/temporary-password"), admin, expect=200)

    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == []


async def test_an_administrator_grant_ends_every_subscription(api, client, accounts, rt, push_service, pair):
    alice, bob, dm = pair
    admin = await admin_account(client, accounts, rt, "root")
    await subscribe(api, bob, push_service, "/phone")

    await api.put(user_url(bob.id, "/admin"), admin, expect=200)

    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == []


async def test_make_admin_on_the_command_line_ends_every_subscription(api, client, rt, push_service, pair, cli):
    alice, bob, dm = pair
    await subscribe(api, bob, push_service, "/phone")

    r = await cli("make-admin", "--email", bob["user"]["email"])
    assert r.exit_code == 0, r.stderr

    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == []


async def test_totp_reset_of_an_administrator_ends_every_subscription(api, client, accounts, rt, push_service, cli):
    alice = await accounts.register("alice")
    admin = await admin_account(client, accounts, rt, "root")
    dm = await open_dm(api, alice, admin)
    await subscribe(api, admin, push_service, "/admin-phone")
    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == ["/admin-phone"]

    r = await cli("totp-reset", "--email", admin["user"]["email"])
    assert r.exit_code == 0, r.stderr

    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == []


async def test_a_banned_account_gets_no_notification(api, client, accounts, rt, push_service, pair):
    alice, bob, dm = pair
    admin = await admin_account(client, accounts, rt, "root")
    await subscribe(api, bob, push_service, "/phone")

    await api.post(user_url(bob.id, "/ban"), admin, json={"reason": "spam"}, expect=200)

    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == []
    # Lifting the ban gives nothing back: the device must subscribe again from a new session.
    await api.post(user_url(bob.id, "/unban"), admin, expect=200)
    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == []


async def test_a_deleted_account_gets_no_notification(api, client, accounts, rt, push_service):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    admin = await admin_account(client, accounts, rt, "root")
    await subscribe(api, bob, push_service, "/phone")
    carol = await accounts.register("carol")
    conv = await group(api, alice, bob, carol, name="Mead club")

    await api.request("DELETE", user_url(bob.id), admin, expect=204)

    await post(client, alice, conv["id"], f"<@{bob.id}> are you there?")
    await deliveries_of(rt).idle()
    assert push_service.received("/phone") == []


@pytest.mark.parametrize("endpoint", ["https://push.example/a\x00b", "https://push.example/a\x01", "https://push.example/\x7f"])
async def test_control_characters_in_an_endpoint_are_refused(api, accounts, endpoint):
    alice = await accounts.register("alice")

    r = await api.request("POST", "/push/subscriptions", alice, json={"endpoint": endpoint, "keys": Browser().keys()},
                          expect=None)
    invalid(r, "endpoint")
    r = await api.request("DELETE", "/push/subscriptions", alice, params={"endpoint": endpoint}, expect=None)
    invalid(r, "endpoint")

"""Web Push configuration and subscriptions (docs/push.md; OpenAPI: getPushConfig, listPushSubscriptions,
createPushSubscription, deletePushSubscription), and the `vapid-keys` command."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from typer.testing import CliRunner

from meadhall.cli.main import app as cli
from meadhall.push.keys import load_private_key, public_key_b64
from tests.support.http import assert_error, invalid, not_found
from tests.support.outbound import VAPID, Browser, b64url

ENDPOINT = "https://127.0.0.2:8443/push/"


def subscription(endpoint=ENDPOINT, browser=None):
    return {"endpoint": endpoint, "keys": (browser or Browser()).keys()}


async def test_config_names_the_public_key(api, accounts):
    alice = await accounts.register("alice")

    config = await api.get("/push/config", alice)

    assert config == {"enabled": True, "public_key": VAPID["public_key"]}
    assert (await api.get("/meta", alice))["features"]["web_push_enabled"] is True


@pytest.mark.parametrize("settings_overrides", [{"VAPID_PRIVATE_KEY": ""}], indirect=True)
async def test_without_a_key_push_is_off(api, accounts):
    alice = await accounts.register("alice")

    assert await api.get("/push/config", alice) == {"enabled": False, "public_key": None}
    r = await api.request("POST", "/push/subscriptions", alice, json=subscription(), expect=None)
    assert_error(r, 403, "push.disabled")
    assert_error(await api.request("POST", "/push/test", alice, expect=None), 403, "push.disabled")


async def test_subscribe_list_and_unsubscribe(api, accounts):
    alice = await accounts.register("alice")

    created = (await api.post("/push/subscriptions", alice, json=subscription(ENDPOINT + "a"), expect=201))["subscription"]
    await api.post("/push/subscriptions", alice, json=subscription(ENDPOINT + "b"), expect=201)

    assert set(created) == {"id", "endpoint", "created_at", "failure_count", "last_delivery_at"}  # keys never shown
    assert created["endpoint"] == ENDPOINT + "a" and created["failure_count"] == 0
    assert created["last_delivery_at"] is None
    listed = (await api.get("/push/subscriptions", alice))["subscriptions"]
    assert [s["endpoint"] for s in listed] == [ENDPOINT + "a", ENDPOINT + "b"]
    await api.delete("/push/subscriptions", alice, params={"endpoint": ENDPOINT + "a"})
    assert [s["endpoint"] for s in (await api.get("/push/subscriptions", alice))["subscriptions"]] == [ENDPOINT + "b"]
    r = await api.request("DELETE", "/push/subscriptions", alice, params={"endpoint": ENDPOINT + "a"}, expect=None)
    not_found(r, "push_subscription.not_found")


async def test_another_users_subscription_cannot_be_deleted(api, accounts):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    await api.post("/push/subscriptions", alice, json=subscription(), expect=201)

    r = await api.request("DELETE", "/push/subscriptions", bob, params={"endpoint": ENDPOINT}, expect=None)

    not_found(r, "push_subscription.not_found")
    assert len((await api.get("/push/subscriptions", alice))["subscriptions"]) == 1


async def test_at_most_ten_and_a_known_endpoint_moves_to_its_new_owner(api, accounts, clock):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    for i in range(10):
        await api.post("/push/subscriptions", alice, json=subscription(f"{ENDPOINT}{i}"), expect=201)
    clock.advance(seconds=60)  # past the push.subscriptions bucket (10 a minute)

    r = await api.request("POST", "/push/subscriptions", alice, json=subscription(ENDPOINT + "10"), expect=None)
    assert_error(r, 409, "push.limit_reached")
    again = await api.post("/push/subscriptions", alice, json=subscription(ENDPOINT + "3"), expect=201)  # own: no new
    moved = await api.post("/push/subscriptions", bob, json=subscription(ENDPOINT + "3"), expect=201)

    assert moved["subscription"]["id"] == again["subscription"]["id"]
    assert [s["endpoint"] for s in (await api.get("/push/subscriptions", bob))["subscriptions"]] == [ENDPOINT + "3"]
    assert len((await api.get("/push/subscriptions", alice))["subscriptions"]) == 9


@pytest.mark.parametrize(("field", "keys"), [
    ("keys.p256dh", {"p256dh": b64url(b"\x04" + b"\x01" * 64)}),  # 65 bytes, not a point on P-256
    ("keys.p256dh", {"p256dh": b64url(b"\x04" + b"\x00" * 64)}),
    ("keys.p256dh", {"p256dh": b64url(bytes(33))}),  # too short
    ("keys.p256dh", {"p256dh": "A"}),  # not even whole bytes
    ("keys.auth", {"auth": b64url(bytes(15))}),
    ("keys.auth", {"auth": b64url(bytes(17))}),
])
async def test_keys_must_be_what_a_browser_makes(api, accounts, field, keys):
    alice = await accounts.register("alice")
    body = subscription()
    body["keys"].update(keys)

    r = await api.request("POST", "/push/subscriptions", alice, json=body, expect=None)

    invalid(r, field)


@pytest.mark.parametrize("endpoint", ["https://127.0.0.1/push", "https://[::1]/push", "https://10.0.0.1/push",
                                      "https://169.254.169.254/x", "https://u:p@127.0.0.2/push"])
async def test_an_endpoint_the_guard_refuses_is_refused_at_once(api, accounts, endpoint):
    alice = await accounts.register("alice")

    r = await api.request("POST", "/push/subscriptions", alice, json=subscription(endpoint), expect=None)

    invalid(r, "endpoint")


async def test_an_endpoint_must_be_https(api, accounts):
    alice = await accounts.register("alice")

    r = await api.request("POST", "/push/subscriptions", alice, json=subscription("http://127.0.0.2/push"),
                          expect=None)

    assert r.status_code == 422


def test_vapid_keys_prints_a_usable_pair_and_writes_nothing(tmp_path):
    os.chdir(tmp_path)

    result = CliRunner().invoke(cli, ["vapid-keys"])

    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert set(out) == {"private_key", "public_key", "env"}
    assert out["env"] == f"VAPID_PRIVATE_KEY={out['private_key']}"
    assert public_key_b64(load_private_key(out["private_key"])) == out["public_key"]
    assert len(out["public_key"]) == 87  # 65 bytes, base64url without padding
    assert list(tmp_path.iterdir()) == []


async def test_the_same_browser_subscribing_twice_at_once_keeps_one_subscription(api, accounts):
    alice = await accounts.register("alice")
    body = subscription()

    answers = await asyncio.gather(*(api.post("/push/subscriptions", alice, json=body, expect=201) for _ in range(2)))

    assert answers[0]["subscription"]["id"] == answers[1]["subscription"]["id"]
    assert len((await api.get("/push/subscriptions", alice))["subscriptions"]) == 1

"""Web Push delivery (docs/push.md): a push service on 127.0.0.2 over TLS receives real RFC 8291 messages that
the test decrypts with the browser's keys and whose VAPID JWT it verifies; who is notified and who is not;
404/410 and five failures in a row prune; 20 a minute; a slow push service never delays a send."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from meadhall.push.delivery import deliveries_of
from tests.support.conversations import group, open_dm
from tests.support.messages import post
from tests.support.outbound import PAGE_HOST, VAPID, vapid_claims
from tests.support.personas import hall
from tests.support.push import subscribe


async def delivered(rt) -> None:
    await deliveries_of(rt).idle()


async def test_a_direct_message_reaches_the_other_participants_device_encrypted_and_signed(
        api, client, accounts, rt, clock, push_service):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    dm = await open_dm(api, alice, bob)
    browser = await subscribe(api, bob, push_service)

    message = await post(client, alice, dm["id"], "Mead tonight? " + "x" * 300)
    await delivered(rt)

    [request] = push_service.received("/device")
    headers = request["headers"]
    assert headers["TTL"] == "43200" and headers["Content-Encoding"] == "aes128gcm"
    payload = browser.decrypt(request["body"])
    assert payload == {
        "type": "message", "message_id": message["id"], "channel_id": dm["id"], "guild_id": None,
        "title": alice["user"]["display_name"], "body": ("Mead tonight? " + "x" * 300)[:199] + "…",
        "url": f"/channels/@me/{dm['id']}/{message['id']}", "tag": f"channel:{dm['id']}"}
    assert len(payload["body"]) == 200
    claims = vapid_claims(headers["Authorization"], VAPID["public_key"])
    assert claims["aud"] == f"https://{PAGE_HOST}:{push_service.port}"
    assert claims["sub"] == "mailto:admin@localhost"
    assert abs(claims["exp"] - (clock.now().timestamp() + 43200)) < 5
    [sub] = (await api.get("/push/subscriptions", bob))["subscriptions"]
    assert sub["last_delivery_at"] is not None and sub["failure_count"] == 0


async def test_mentions_in_a_guild_room_notify_only_the_mentioned(api, client, accounts, rt, push_service):
    h = await hall(client, accounts, rt)
    a_device = await subscribe(api, h.a, push_service, "/alice")
    await subscribe(api, h.b, push_service, "/bob")

    await post(client, h.owner, h.general, "no mention here")
    mention = await post(client, h.owner, h.general, f"<@{h.a.id}> look")
    await post(client, h.a, h.general, f"<@{h.a.id}> talking to myself")  # own message
    await delivered(rt)

    assert push_service.received("/bob") == []
    [request] = push_service.received("/alice")
    payload = a_device.decrypt(request["body"])
    assert payload["message_id"] == mention["id"] and payload["guild_id"] == h.id
    assert payload["title"] == f"{h.owner['user']['display_name']} in #general"
    assert payload["url"] == f"/channels/{h.id}/{h.general}/{mention['id']}"


async def test_everyone_by_a_holder_of_mention_everyone_notifies_every_viewer(api, client, accounts, rt,
                                                                              push_service):
    h = await hall(client, accounts, rt)
    await subscribe(api, h.a, push_service, "/alice")
    await subscribe(api, h.b, push_service, "/bob")
    await subscribe(api, h.outsider, push_service, "/outsider")

    await post(client, h.owner, h.general, "@everyone meeting in the hall")
    await delivered(rt)

    assert sorted(r["path"] for r in push_service.received()) == ["/alice", "/bob"]


async def test_a_group_conversation_notifies_every_other_participant(api, client, accounts, rt, push_service):
    alice, bob, carol = [await accounts.register(n) for n in ("alice", "bob", "carol")]
    conv = await group(api, alice, bob, carol, name="Mead club")
    devices = {who.id: await subscribe(api, who, push_service, f"/{who.id}") for who in (alice, bob, carol)}

    await post(client, alice, conv["id"], "who brings the honey?")
    await delivered(rt)

    assert sorted(r["path"] for r in push_service.received()) == sorted([f"/{bob.id}", f"/{carol.id}"])
    payload = devices[bob.id].decrypt(push_service.received(f"/{bob.id}")[0]["body"])
    assert payload["title"] == f"{alice['user']['display_name']} in Mead club"
    assert payload["url"].startswith(f"/channels/@me/{conv['id']}/")


async def test_no_push_for_own_messages_nor_while_a_client_is_open(api, client, accounts, rt, push_service,
                                                                     gateway):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    dm = await open_dm(api, alice, bob)
    await subscribe(api, alice, push_service, "/alice")
    await subscribe(api, bob, push_service, "/bob")
    await gateway.identified(bob["token"])  # bob is online in a client

    await post(client, alice, dm["id"], "hi bob")
    await delivered(rt)

    assert push_service.requests == []  # bob is online; alice wrote it


async def test_no_push_for_system_messages(api, client, accounts, rt, push_service):
    h = await hall(client, accounts, rt)
    await subscribe(api, h.owner, push_service, "/owner")
    await subscribe(api, h.a, push_service, "/alice")
    newcomer = await accounts.register("newcomer")
    invite = await api.post(f"/channels/{h.general}/invites", h.owner, json={}, expect=201)
    code = invite.get("code") or invite["invite"]["code"]

    await api.post(f"/invites/{code}", newcomer, expect=200)  # the join is announced by a system message
    await delivered(rt)

    assert push_service.requests == []


@pytest.mark.parametrize("status", [404, 410])
async def test_a_gone_subscription_is_removed_at_once(api, client, accounts, rt, push_service, status):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    dm = await open_dm(api, alice, bob)
    await subscribe(api, bob, push_service, "/gone")
    await subscribe(api, bob, push_service, "/fine")
    push_service.status["/gone"] = status

    await post(client, alice, dm["id"], "hello")
    await delivered(rt)

    assert [s["endpoint"] for s in (await api.get("/push/subscriptions", bob))["subscriptions"]] == [
        push_service.url("/fine")]


async def test_five_failures_in_a_row_remove_a_subscription_and_a_success_resets_the_count(
        api, client, accounts, rt, push_service):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    dm = await open_dm(api, alice, bob)
    await subscribe(api, bob, push_service, "/flaky")
    push_service.status["/flaky"] = 500

    async def failures() -> list[int]:
        return [s["failure_count"] for s in (await api.get("/push/subscriptions", bob))["subscriptions"]]

    for expected in (1, 2, 3, 4):
        await post(client, alice, dm["id"], "ping")
        await delivered(rt)
        assert await failures() == [expected]
    push_service.status["/flaky"] = 201
    await post(client, alice, dm["id"], "ping")
    await delivered(rt)
    assert await failures() == [0]
    push_service.status["/flaky"] = 503
    for _ in range(5):
        await post(client, alice, dm["id"], "ping")
        await delivered(rt)

    assert await failures() == []
    assert len(push_service.received("/flaky")) == 10


async def test_an_unreachable_push_service_counts_as_a_failure(api, client, accounts, rt, push_service):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    dm = await open_dm(api, alice, bob)
    await subscribe(api, bob, push_service, "/device")
    await push_service.stop()  # nothing listens there any more

    await post(client, alice, dm["id"], "anyone?")
    await delivered(rt)

    assert [s["failure_count"] for s in (await api.get("/push/subscriptions", bob))["subscriptions"]] == [1]
    await push_service.start()  # the fixture stops it again


async def test_at_most_twenty_notifications_a_minute(api, client, accounts, rt, clock, push_service):
    bob = await accounts.register("bob")
    senders = [await accounts.register(name) for name in ("alice", "carol", "dave")]
    rooms = [await open_dm(api, who, bob) for who in senders]
    await subscribe(api, bob, push_service)

    for i in range(25):  # three conversations, within each sender's messages.send burst of 10
        await post(client, senders[i % 3], rooms[i % 3]["id"], f"message {i}")
    await delivered(rt)
    assert len(push_service.received()) == 20

    clock.advance(seconds=60)
    await post(client, senders[0], rooms[0]["id"], "later")
    await delivered(rt)
    assert len(push_service.received()) == 21


async def test_a_slow_push_service_never_delays_the_send(api, client, accounts, rt, push_service):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    dm = await open_dm(api, alice, bob)
    await subscribe(api, bob, push_service)
    push_service.delay = 2.0

    loop = asyncio.get_running_loop()
    started = loop.time()
    await post(client, alice, dm["id"], "quick")
    answered = loop.time() - started
    await delivered(rt)

    assert answered < 1.0
    assert len(push_service.received()) == 1


async def test_send_me_a_test_reaches_every_device_even_with_a_client_open(api, accounts, rt, push_service,
                                                                          gateway):
    alice = await accounts.register("alice")
    phone = await subscribe(api, alice, push_service, "/phone")
    laptop = await subscribe(api, alice, push_service, "/laptop")
    await gateway.identified(alice["token"])

    answer = await api.post("/push/test", alice, expect=202)
    await delivered(rt)

    assert answer == {"subscriptions": 2}
    payloads: list[dict[str, Any]] = [phone.decrypt(push_service.received("/phone")[0]["body"]),
                                      laptop.decrypt(push_service.received("/laptop")[0]["body"])]
    assert all(p["type"] == "test" and p["url"] == "/" and p["tag"] == "test" for p in payloads)


async def test_a_webhook_message_notifies_the_mentioned_under_the_webhooks_name(api, client, accounts, rt,
                                                                              push_service):
    h = await hall(client, accounts, rt)
    device = await subscribe(api, h.a, push_service, "/alice")
    await subscribe(api, h.owner, push_service, "/owner")
    hook = (await api.post(f"/channels/{h.general}/webhooks", h.owner, json={"name": "Deploys"}, expect=201))["webhook"]

    r = await client.post(f"/api/v1/webhooks/{hook['id']}/{hook['token']}", json={"content": f"<@{h.a.id}> shipped"})
    assert r.status_code == 201, r.text
    await delivered(rt)

    [request] = push_service.received()  # the creator is not the author: no push for them
    payload = device.decrypt(request["body"])
    assert payload["title"] == "Deploys in #general"
    assert payload["body"] == f"@{h.a['user']['display_name']} shipped"  # a notification cannot look names up

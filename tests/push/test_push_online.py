""""Online in a client" (docs/push.md): Web Push waits while the recipient has an open gateway
connection, and only then. A connection that closed stops counting as soon as the service noticed the close
(a mention sent just after someone closed the app is pushed); a gateway session kept only for RESUME is not
a connection; heartbeats keep an open connection counted, and one nobody has heard from past its safety
expiry (what a node that died leaves behind) no longer counts. Across two nodes (with Redis): a connection
on node A holds back the push of a message sent through node B until it closes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.conversations import open_dm
from tests.support.nodes import second_node_with_runtime
from tests.support.outbound import confine
from tests.support.push import pushed_after_a_message, subscribe

SAFETY_EXPIRY = 90  # 2 x the heartbeat timeout of 45 s (docs/gateway.md)


async def closed(gateway: Any, connection: Any, user_id: str) -> None:
    """Close the client's connection and wait until the server side has noticed it."""
    await connection.close()
    for _ in range(200):
        if not gateway.hub.connected(int(user_id)):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the server never noticed the close")


@pytest.fixture
async def pair(api: Any, accounts: Any, push_service: Any) -> tuple[Any, Any, dict[str, Any]]:
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    await subscribe(api, bob, push_service, "/phone")
    return alice, bob, await open_dm(api, alice, bob)


async def test_a_message_just_after_the_app_closed_is_pushed(client, rt, push_service, gateway, pair):
    alice, bob, dm = pair
    connection = await gateway.identified(bob["token"])
    assert await pushed_after_a_message(client, rt, push_service, alice, dm, "while the app is open") == []

    await closed(gateway, connection, bob.id)

    assert await pushed_after_a_message(client, rt, push_service, alice, dm,
                                        "just after it closed") == ["/phone"]  # no 45 s wait


async def test_any_open_connection_counts_until_the_last_closes(client, rt, push_service, gateway, pair):
    alice, bob, dm = pair
    phone, laptop = await gateway.identified(bob["token"]), await gateway.identified(bob["token"])

    await phone.close()
    await phone.wait_closed()
    await asyncio.sleep(0.1)  # the server side handles the close
    assert await pushed_after_a_message(client, rt, push_service, alice, dm, "the laptop is still open") == []

    await closed(gateway, laptop, bob.id)
    assert await pushed_after_a_message(client, rt, push_service, alice, dm, "both closed") == ["/phone"]


async def test_a_session_kept_for_resume_is_not_a_connection_and_a_resume_is(client, rt, push_service, gateway,
                                                                              pair):
    alice, bob, dm = pair
    first = await gateway.identified(bob["token"])
    await closed(gateway, first, bob.id)
    assert first.session_id in gateway.hub.sessions  # kept for RESUME

    assert await pushed_after_a_message(client, rt, push_service, alice, dm,
                                        "nobody is connected") == ["/phone"]

    again = await gateway.connect()
    assert (await again.recv())["op"] == 10
    await again.send(6, {"token": bob["token"], "session_id": first.session_id, "seq": first.last_seq})
    await again.dispatch("RESUMED")
    assert await pushed_after_a_message(client, rt, push_service, alice, dm, "resumed") == []


async def test_heartbeats_keep_a_connection_counted(client, rt, clock, push_service, gateway, pair):
    alice, bob, dm = pair
    connection = await gateway.identified(bob["token"])
    for _ in range(3):
        clock.advance(SAFETY_EXPIRY - 10)
        await connection.send(1, connection.last_seq)
        await connection.recv_until(lambda f: f["op"] == 11)

    assert await pushed_after_a_message(client, rt, push_service, alice, dm, "still open") == []


async def test_a_connection_unheard_of_past_its_safety_expiry_no_longer_counts(client, rt, clock, push_service,
                                                                              gateway, pair):
    """As if its node had died: nothing closed it, nothing renews it."""
    alice, bob, dm = pair
    await gateway.identified(bob["token"])
    clock.advance(SAFETY_EXPIRY - 5)
    assert await pushed_after_a_message(client, rt, push_service, alice, dm, "within the expiry") == []

    clock.advance(10)

    assert await pushed_after_a_message(client, rt, push_service, alice, dm, "past the expiry") == ["/phone"]


async def test_a_connection_closed_on_one_node_lets_another_node_push(settings, client, rt, clock, push_service,
                                                                      gateway, pair):
    if rt.redis is None:
        pytest.skip("two nodes share presence through Redis (TEST_REDIS_URL)")
    alice, bob, dm = pair
    async with second_node_with_runtime(settings, rt, clock) as (node_b, rt_b):
        confine(rt_b.outbound)
        rt_b.outbound.ssl_context = push_service.client_tls
        connection = await gateway.identified(bob["token"])  # on node A
        assert await pushed_after_a_message(node_b, rt_b, push_service, alice, dm,
                                            "sent through B while A holds the app") == []

        await closed(gateway, connection, bob.id)

        assert await pushed_after_a_message(node_b, rt_b, push_service, alice, dm,
                                            "sent through B just after the close on A") == ["/phone"]

"""A session that expired (SESSION_TTL_DAYS without use) has ended even though its row is deleted only when its
token is next presented: its subscriptions get no notification from then on (docs/push.md, "Subscriptions end
with their session")."""

from __future__ import annotations

from typing import Any

import pytest

from meadhall.push.delivery import deliveries_of
from tests.support.accounts import second_session
from tests.support.conversations import open_dm
from tests.support.messages import post
from tests.support.outbound import Browser
from tests.support.personas import Account


async def subscribe(api: Any, who: Any, push_service: Any, path: str) -> None:
    await api.post("/push/subscriptions", who, json={"endpoint": push_service.url(path), "keys": Browser().keys()},
                   expect=201)


# No token rotation while the clock moves on by weeks (the conftest's overrides take the parameter).
@pytest.mark.parametrize("settings_overrides", [{"SESSION_ROTATE_HOURS": 87600}], indirect=True)
async def test_an_expired_sessions_subscription_gets_nothing_while_a_used_one_does(api, client, accounts, rt, clock,
                                                                                  push_service):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    dm = await open_dm(api, alice, bob)
    other = await second_session(client, bob)
    laptop = Account(token=other["token"], user=other["user"], password=bob["password"], session=other["session"])
    await subscribe(api, bob, push_service, "/phone")  # the phone is never used again
    await subscribe(api, laptop, push_service, "/laptop")
    ttl_days = rt.settings.SESSION_TTL_DAYS

    clock.advance(days=ttl_days - 5)
    for active in (alice, laptop):  # a use slides these sessions' lifetime on
        await api.get("/users/@me", active)
    clock.advance(days=6)  # the phone's session is now past its lifetime; the others are not
    push_service.requests.clear()
    await post(client, alice, dm["id"], "are you still there?")
    await deliveries_of(rt).idle()

    assert sorted(r["path"] for r in push_service.received()) == ["/laptop"]

"""A session that expired (SESSION_TTL_DAYS without use) has ended even though its row is deleted only when its
token is next presented: its subscriptions get no notification from then on (docs/push.md, "Subscriptions end
with their session")."""

from __future__ import annotations

import pytest

from tests.support.accounts import another_device
from tests.support.conversations import open_dm
from tests.support.push import pushed_after_a_message, subscribe


# No token rotation while the clock moves on by weeks (the conftest's overrides take the parameter).
@pytest.mark.parametrize("settings_overrides", [{"SESSION_ROTATE_HOURS": 87600}], indirect=True)
async def test_an_expired_sessions_subscription_gets_nothing_while_a_used_one_does(api, client, accounts, rt, clock,
                                                                                  push_service):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    dm = await open_dm(api, alice, bob)
    laptop = await another_device(client, bob)
    await subscribe(api, bob, push_service, "/phone")  # the phone is never used again
    await subscribe(api, laptop, push_service, "/laptop")
    ttl_days = rt.settings.SESSION_TTL_DAYS

    clock.advance(days=ttl_days - 5)
    for active in (alice, laptop):  # a use slides these sessions' lifetime on
        await api.get("/users/@me", active)
    clock.advance(days=6)  # the phone's session is now past its lifetime; the others are not

    assert await pushed_after_a_message(client, rt, push_service, alice, dm) == ["/laptop"]

"""Web Push as a device sees it (docs/push.md): subscribing a signed-in session to the test's push service
(tests/push/conftest.py), and which of its endpoints a message sent now reaches."""

from __future__ import annotations

from typing import Any

from meadhall.push.delivery import deliveries_of
from tests.support.messages import post
from tests.support.outbound import Browser


async def subscribe(api: Any, who: Any, push_service: Any, path: str = "/device") -> Browser:
    """Subscribe `who`'s session to the endpoint `path` of the push service; the browser holding the keys."""
    browser = Browser()
    await api.post("/push/subscriptions", who, json={"endpoint": push_service.url(path), "keys": browser.keys()},
                   expect=201)
    return browser


async def pushed_after_a_message(client: Any, rt: Any, push_service: Any, sender: Any, dm: dict[str, Any],
                                 text: str = "are you still there?") -> list[str]:
    """The endpoint paths the push service receives for a direct message `sender` sends now (through `client`,
    delivered by `rt`'s push deliveries), sorted."""
    push_service.requests.clear()
    await post(client, sender, dm["id"], text)
    await deliveries_of(rt).idle()
    return sorted(r["path"] for r in push_service.received())

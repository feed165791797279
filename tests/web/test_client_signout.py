"""Sign-out in a real headless Chromium (docs/client.md "Sessions", docs/push.md): the client asks the
service to delete this browser's push subscription while the session is still valid, unsubscribes it in
the browser, signs out, and leaves no draft in the browser's storage. The browser's push machinery is a
stand-in (a headless browser has no push service); the requests are the real ones."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.browser import ORIGIN, PASSWORD, needs_chromium, needs_client, only_expected, open_page
from tests.support.guilds import accept_invite, give, make_guild, make_invite, make_role
from tests.support.outbound import ALLOWED, VAPID, Browser

pytestmark = [needs_chromium, needs_client]

WAIT = 10000
ENDPOINT = "https://127.0.0.2:8443/send/this-browser"

# The page's service worker registration, with a push subscription that records its unsubscription.
PUSH_STAND_IN = """
window.__unsubscribed = [];
let subscription = {endpoint: ENDPOINT, unsubscribe: async () => {
  window.__unsubscribed.push(ENDPOINT); subscription = null; return true; }};
const registration = {pushManager: {getSubscription: async () => subscription}};
ServiceWorkerContainer.prototype.getRegistration = async () => registration;
""".replace("ENDPOINT", json.dumps(ENDPOINT))


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60"},
            "VAPID_PRIVATE_KEY": VAPID["private_key"], "OUTBOUND_ALLOWED_NETWORKS": ALLOWED}


async def test_sign_out_forgets_the_push_subscription_and_the_drafts(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    guild = await make_guild(client, freya)
    context, page, _errors = await open_page(browser, "freya", f"/channels/{guild['id']}/{guild['system_channel_id']}")
    await context.add_init_script(PUSH_STAND_IN)
    await page.reload()
    # This browser's subscription, made by its session as the settings screen makes it.
    status = await page.evaluate("""async (body) => (await fetch('/api/v1/push/subscriptions', {method: 'POST',
        headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)})).status""",
                                 {"endpoint": ENDPOINT, "keys": Browser().keys()})
    assert status == 201
    requests: list[tuple[str, str, int]] = []
    page.on("response", lambda r: requests.append((r.request.method, r.url, r.status)) if "/api/v1/" in r.url else None)

    box = page.get_by_role("textbox", name="Message #general")
    await box.fill("half a thought, not for the next person at this browser")
    await page.wait_for_function("() => Object.keys(localStorage).some(k => k.startsWith('draft:'))", timeout=WAIT)
    await page.evaluate("() => sessionStorage.setItem('draft:1', 'kept per tab')")

    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("textbox", name="Username or email")).to_be_visible(timeout=WAIT)

    calls = [(method, urlsplit(url), status) for method, url, status in requests]
    deleted = [i for i, (m, u, _) in enumerate(calls) if m == "DELETE" and u.path == "/api/v1/push/subscriptions"]
    logout = [i for i, (m, u, _) in enumerate(calls) if m == "POST" and u.path == "/api/v1/auth/logout"]
    assert len(deleted) == 1 and len(logout) == 1 and deleted[0] < logout[0], requests
    assert parse_qs(calls[deleted[0]][1].query) == {"endpoint": [ENDPOINT]} and calls[deleted[0]][2] == 204
    assert await page.evaluate("() => window.__unsubscribed") == [ENDPOINT]
    assert await page.evaluate("() => [...Object.keys(localStorage), ...Object.keys(sessionStorage)]"
                               ".filter(k => k.startsWith('draft:'))") == []
    await context.close()


async def test_the_next_account_in_the_same_tab_starts_fresh(site, browser, client, accounts):
    """Freya signs out and Bjorn signs in in the same page: Bjorn sees his own member list with its role
    colours (not what the client fetched for Freya), and nothing of Freya's session raises an error (her
    open room, in a server Bjorn is not in, answered "Unknown room")."""
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    bjorn = await accounts.register("bjorn")
    sigrid = await accounts.register("sigrid")
    hall = await make_guild(client, freya, "Mead Hall")
    # No join messages: the members a client knows of come from the member list it fetches, not from the
    # authors of the room's history.
    r = await client.patch(f"/api/v1/guilds/{hall['id']}", json={"system_channel_id": None}, headers=freya.headers)
    assert r.status_code == 200, r.text
    for who in (bjorn, sigrid):
        code = (await make_invite(client, freya, hall["system_channel_id"]))["code"]
        await accept_invite(client, who, code)
    skalds = await make_role(client, freya, hall["id"], "Skalds", color=0xE91E63, hoist=True)
    await give(client, freya, hall["id"], bjorn, skalds["id"])
    own = await make_guild(client, freya, "Freya's Loft")

    context, page, errors = await open_page(browser, "freya", f"/channels/{hall['id']}/{hall['system_channel_id']}")
    members = page.get_by_role("complementary", name="Members")
    await expect(members.get_by_text("sigrid")).to_be_visible(timeout=WAIT)  # Freya's client fetched the members
    await page.goto(f"{ORIGIN}/channels/{own['id']}/{own['system_channel_id']}")
    await expect(page.get_by_role("textbox", name="Message #general")).to_be_visible(timeout=WAIT)

    await page.get_by_role("button", name="Sign out").click()
    await page.get_by_role("textbox", name="Username or email").fill("bjorn")
    await page.get_by_label("Password", exact=True).fill(PASSWORD)
    await page.get_by_role("button", name="Sign in", exact=True).click()
    await expect(page.get_by_role("button", name="Sign out")).to_be_visible(timeout=WAIT)
    await page.get_by_role("link", name="Mead Hall").click()

    await expect(members.get_by_text("Skalds — 1")).to_be_visible(timeout=WAIT)
    await expect(members.get_by_text("sigrid")).to_be_visible(timeout=WAIT)
    await expect(members.get_by_text("freya")).to_be_visible()
    name = members.locator(".name", has_text="bjorn")
    await expect(name).to_have_attribute("style", re.compile("#e91e63", re.IGNORECASE))  # the role's colour
    await expect(page.get_by_role("navigation", name="Servers").get_by_role("link", name="Freya's Loft")).to_have_count(0)
    await page.wait_for_load_state("networkidle")
    assert [e for e in errors if e.startswith("pageerror")] == []
    assert only_expected(errors) == []
    await context.close()

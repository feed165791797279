"""Discover servers in the web client (docs/client.md, "Discover public servers"): the compass button of the
server bar opens the region `Public servers` listing the instance's public servers (OpenAPI:
listPublicGuilds) with icon, name, description and member count, searched as one types and paged by cursor;
`Join` goes in through the public invitation (joinInvite) and opens the server, a server one is in offers
`Open`; the empty and failed states are said in words; no serious accessibility violation."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.browser import ORIGIN, needs_chromium, needs_client, open_page, serious_axe_violations
from tests.support.guilds import make_guild

pytestmark = [needs_chromium, needs_client]

WAIT = 10000


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the listing and joining are covered on both databases by tests/guilds/test_public_servers.py


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"global": "10000/60", "guilds.create": "1000/60"}}


async def public_guild(client: Any, owner: Any, name: str, **extra: Any) -> dict[str, Any]:
    guild = await make_guild(client, owner, name, **extra)
    r = await client.patch(f"/api/v1/guilds/{guild['id']}", json={"public": True}, headers=owner.headers)
    assert r.status_code == 200, r.text
    return r.json()["guild"]


def card(region: Any, name: str) -> Any:
    return region.get_by_role("listitem").filter(has=region.page.get_by_role("heading", name=name, exact=True))


async def test_discover_search_join_and_open(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    winter = await public_guild(client, freya, "Long Winter", description="Stories by the fire")
    mead = await public_guild(client, freya, "Mead Makers", description="Honey, water, patience")
    await make_guild(client, freya, "Secret Grove")  # not public: never listed
    await accounts.register("thor")

    context, page, errors = await open_page(browser, "thor", "/channels/@me")
    servers = page.get_by_role("navigation", name="Servers")
    await servers.get_by_role("button", name="Discover servers").click()
    region = page.get_by_role("region", name="Public servers")
    await expect(region).to_be_visible(timeout=WAIT)
    await expect(region.get_by_role("textbox", name="Search servers")).to_be_focused()
    await expect(card(region, "Long Winter")).to_contain_text("Stories by the fire")
    await expect(card(region, "Long Winter")).to_contain_text("1 member")
    await expect(card(region, "Mead Makers")).to_contain_text("Honey, water, patience")
    await expect(region.get_by_role("heading", name="Secret Grove")).to_have_count(0)
    assert await serious_axe_violations(page) == []

    # Searching narrows the list as one types (the service's `q`).
    await region.get_by_role("textbox", name="Search servers").fill("mead")
    await expect(region.get_by_role("heading", name="Long Winter")).to_have_count(0, timeout=WAIT)
    await expect(card(region, "Mead Makers")).to_be_visible()
    await region.get_by_role("textbox", name="Search servers").fill("nothing like it")
    await expect(region.get_by_role("status")).to_have_text("No public server is named like “nothing like it”.",
                                                            timeout=WAIT)
    await region.get_by_role("textbox", name="Search servers").fill("mead")

    # Join: in through the public invitation, then the server opens and the panel goes away.
    await card(region, "Mead Makers").get_by_role("button", name="Join").click()
    await page.wait_for_url(re.compile(rf"{ORIGIN}/channels/{mead['id']}/\d+"), timeout=WAIT)
    await expect(region).to_be_hidden()
    await expect(servers.get_by_role("link", name="Mead Makers")).to_be_visible()
    r = await client.get(f"/api/v1/guilds/{mead['id']}/members", headers=freya.headers)
    assert {m["user"]["username"] for m in r.json()["members"]} == {"freya", "thor"}

    # A server one is in offers Open instead of Join.
    await servers.get_by_role("button", name="Discover servers").click()
    await expect(card(region, "Mead Makers").get_by_role("button", name="Open")).to_be_visible(timeout=WAIT)
    await expect(card(region, "Mead Makers").get_by_role("button", name="Join")).to_have_count(0)
    await expect(card(region, "Mead Makers")).to_contain_text("2 members")
    # Escape closes it and gives the focus back to the compass.
    await page.keyboard.press("Escape")
    await expect(region).to_be_hidden()
    await expect(servers.get_by_role("button", name="Discover servers")).to_be_focused()
    # Opened again, it keeps the search; cleared, every public server is back.
    await servers.get_by_role("button", name="Discover servers").click()
    await expect(region.get_by_role("textbox", name="Search servers")).to_have_value("mead")
    await region.get_by_role("textbox", name="Search servers").fill("")
    await card(region, "Long Winter").get_by_role("button", name="Join").click()
    await page.wait_for_url(re.compile(rf"{ORIGIN}/channels/{winter['id']}/\d+"), timeout=WAIT)
    assert errors == []
    await context.close()


async def test_discover_pages_by_cursor_and_says_a_failure_in_words(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    halls = [await public_guild(client, freya, f"Hall {n:02d}") for n in range(26)]
    thor = await accounts.register("thor")
    # Banned from the newest hall before ever joining it (a ban may name someone who is not a member).
    r = await client.put(f"/api/v1/guilds/{halls[-1]['id']}/bans/{thor.id}", json={"reason": "Mischief"},
                         headers=freya.headers)
    assert r.status_code == 204, r.text

    context, page, errors = await open_page(browser, "thor", "/channels/@me")
    await page.get_by_role("button", name="Discover servers").click()
    region = page.get_by_role("region", name="Public servers")
    # Newest first, 24 a page; the rest behind "More servers" (the `before` cursor).
    await expect(region.get_by_role("listitem")).to_have_count(24, timeout=WAIT)
    await expect(card(region, "Hall 00")).to_have_count(0)
    await region.get_by_role("button", name="More servers").click()
    await expect(region.get_by_role("listitem")).to_have_count(26, timeout=WAIT)
    await expect(card(region, "Hall 00")).to_be_visible()
    await expect(region.get_by_role("button", name="More servers")).to_have_count(0)

    # A refused Join is said on the server's card, and nothing opens.
    await card(region, "Hall 25").get_by_role("button", name="Join").click()
    await expect(card(region, "Hall 25").get_by_role("alert")).to_have_text("You are banned from this server.",
                                                                            timeout=WAIT)
    await expect(card(region, "Hall 25").get_by_role("button", name="Join")).to_be_enabled()
    assert "/channels/@me" in page.url

    # The service unreachable: the reason in words and a way to try again.
    await page.route("**/api/v1/guilds/public*", lambda route: route.abort())
    await region.get_by_role("textbox", name="Search servers").fill("hall 1")
    alert = region.get_by_role("alert")
    await expect(alert).to_contain_text("The public servers could not be loaded", timeout=WAIT)
    await page.unroute("**/api/v1/guilds/public*")
    await alert.get_by_role("button", name="Try again").click()
    await expect(region.get_by_role("listitem")).to_have_count(10, timeout=WAIT)
    assert [e for e in errors if "net::ERR_FAILED" not in e and "403" not in e] == []
    await context.close()

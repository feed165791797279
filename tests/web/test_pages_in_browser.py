"""The server-rendered pages in a real browser (Debian's chromium driven by Playwright): signing in sets
the `__Host-session` cookie over plain-HTTP localhost (OpenAPI: login), and the invitation page's "Accept
invitation" joins the server through its same-origin script under the page's CSP and leads into the web
client's room (OpenAPI: invitePage, joinInvite)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.browser import ORIGIN, needs_chromium

pytestmark = needs_chromium


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the pages read through the same services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN}


async def sign_in_in_page(page: Any, login: str, password: str) -> int:
    """A same-origin sign-in from a page of the service, as the web client will do it."""
    return int(await page.evaluate(
        """async ([login, password]) => (await fetch('/api/v1/auth/login', {method: 'POST',
             headers: {'Content-Type': 'application/json'}, body: JSON.stringify({login, password})})).status""",
        [login, password]))


async def test_accept_invitation_joins_through_the_page_script(site, browser, client, accounts):
    owner = await accounts.register("freya")
    r = await client.post("/api/v1/guilds", json={"name": "Long Winter"}, headers=owner.headers)
    guild = r.json()["guild"]
    r = await client.post(f"/api/v1/channels/{guild['system_channel_id']}/invites", json={}, headers=owner.headers)
    code = r.json()["invite"]["code"]
    guest = await accounts.register("thor")

    context = await browser.new_context()
    page = await context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    await page.goto(f"{site}/invite/{code}")  # a page of the origin, without the client's own requests
    assert await sign_in_in_page(page, "thor", guest["password"]) == 200
    cookies = {c["name"]: c for c in await context.cookies()}
    assert cookies["__Host-session"]["secure"] is True and cookies["__Host-session"]["httpOnly"] is True

    await page.goto(f"{site}/invite/{code}")
    await page.get_by_role("button", name="Accept invitation").click()
    await page.wait_for_url(f"{site}/channels/{guild['id']}/{guild['system_channel_id']}", timeout=5000)
    assert errors == []  # no CSP violation, no script error

    r = await client.get(f"/api/v1/guilds/{guild['id']}/members/{guest.id}", headers=owner.headers)
    assert r.status_code == 200, r.text
    await context.close()


async def test_signed_out_visitor_is_led_to_sign_in(site, browser, client, accounts):
    owner = await accounts.register("freya")
    r = await client.post("/api/v1/guilds", json={"name": "Long Winter"}, headers=owner.headers)
    guild = r.json()["guild"]
    r = await client.post(f"/api/v1/channels/{guild['system_channel_id']}/invites", json={}, headers=owner.headers)
    code = r.json()["invite"]["code"]

    page = await browser.new_page()
    await page.goto(f"{site}/invite/{code}")
    link = page.get_by_role("link", name="Sign in to accept the invitation")
    assert await link.get_attribute("href") == f"/login?next=/invite/{code}"
    # The stylesheet is the service's own file: the page is styled under its CSP.
    background = await page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent")
    await page.close()

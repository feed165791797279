"""The web client end to end in a real headless Chromium (docs/client.md): a person registers, creates a
server and sends; a second person joins by the invitation link and sees the message; replies, typing
and reactions arrive live without reload; a reload keeps the session; sign-out ends it; a dropped
gateway connection resumes without losing or doubling a message; no serious accessibility violation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.browser import (
    ORIGIN,
    PASSWORD,
    needs_chromium,
    needs_client,
    serious_axe_violations,
    signed_in_context,
    watch_errors,
)

pytestmark = [needs_chromium, needs_client]

WAIT = 10000


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60"}}




async def register_in_page(page: Any, username: str) -> None:
    await page.get_by_role("textbox", name="Username").fill(username)
    await page.get_by_role("textbox", name="Email").fill(f"{username}@example.com")
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Create account").click()


def log(page: Any) -> Any:
    return page.get_by_role("log", name="Messages")


def article(page: Any, text: str) -> Any:
    return log(page).get_by_role("article").filter(has_text=text)


async def test_two_people_chat_live(site, browser):
    from playwright.async_api import expect

    freya_ctx = await browser.new_context()
    freya = await freya_ctx.new_page()
    freya_errors = watch_errors(freya)

    # Register, create a server, send.
    await freya.goto(f"{site}/")
    await freya.get_by_role("link", name="Create an account").click()
    await register_in_page(freya, "freya")
    await freya.get_by_role("button", name="Create a server").click()
    await freya.get_by_role("textbox", name="Server name").fill("Long Winter")
    await freya.get_by_role("button", name="Create", exact=True).click()
    await expect(freya.get_by_role("navigation", name="Servers").get_by_role("link", name="Long Winter")).to_be_visible()
    await expect(freya.get_by_role("navigation", name="Rooms").get_by_role("link", name="general")).to_be_visible()
    composer = freya.get_by_role("textbox", name="Message #general")
    await composer.fill("Hail, friends of the hall")
    await composer.press("Enter")
    await expect(article(freya, "Hail, friends of the hall")).to_contain_text("freya", timeout=WAIT)

    # The invitation link.
    await freya.get_by_role("button", name="Invite people").click()
    link_box = freya.get_by_role("textbox", name="Invite link")
    await expect(link_box).not_to_have_value("", timeout=WAIT)
    invite_url = await link_box.input_value()
    assert invite_url.startswith(f"{ORIGIN}/invite/")
    await freya.keyboard.press("Escape")

    # A second person follows it, signs up on the way and lands in the room.
    thor_ctx = await browser.new_context()
    thor = await thor_ctx.new_page()
    thor_errors = watch_errors(thor)
    await thor.goto(invite_url)
    await thor.get_by_role("link", name="Create an account").click()
    await register_in_page(thor, "thor")
    await thor.get_by_role("button", name="Accept invitation").click()
    await expect(article(thor, "Hail, friends of the hall")).to_contain_text("freya", timeout=WAIT)
    await expect(thor.get_by_role("complementary", name="Members")).to_contain_text("freya")

    # Typing shows on the other side.
    thor_box = thor.get_by_role("textbox", name="Message #general")
    await thor_box.press_sequentially("On my w")
    await expect(freya.get_by_role("status").filter(has_text="thor is typing…")).to_be_visible(timeout=WAIT)

    # A reply arrives live, without reload.
    await thor_box.fill("")
    hail = article(thor, "Hail, friends of the hall")
    await hail.hover()
    await hail.get_by_role("button", name="Reply").click()
    await thor_box.fill("On my way with the mead")
    await thor_box.press("Enter")
    reply = article(freya, "On my way with the mead")
    await expect(reply).to_contain_text("thor", timeout=WAIT)
    await expect(reply).to_contain_text("Replying to")
    await expect(freya.get_by_role("status").filter(has_text="is typing")).to_have_count(0, timeout=WAIT)

    # A reaction, seen by both.
    await reply.hover()
    await reply.get_by_role("button", name="Add reaction").click()
    await reply.get_by_role("button", name="React with 👍").click()
    await expect(reply.get_by_role("button", name="👍, 1 reactions")).to_have_attribute("aria-pressed", "true")
    theirs = article(thor, "On my way with the mead").get_by_role("button", name="👍, 1 reactions")
    await expect(theirs).to_have_attribute("aria-pressed", "false", timeout=WAIT)

    # A reload keeps the session and the history.
    await freya.reload()
    await expect(article(freya, "On my way with the mead")).to_be_visible(timeout=WAIT)
    await expect(freya.get_by_role("textbox", name="Message #general")).to_be_visible()

    # Sign out: back to sign-in, and a reload stays signed out.
    await freya.get_by_role("button", name="Sign out").click()
    await expect(freya.get_by_role("textbox", name="Username or email")).to_be_visible(timeout=WAIT)
    await freya.reload()
    await expect(freya.get_by_role("textbox", name="Username or email")).to_be_visible(timeout=WAIT)
    cookies = [c["name"] for c in await freya_ctx.cookies()]
    assert "__Host-session" not in cookies

    # The only console errors allowed are the 401 answers of "who am I?" while signed out.
    for errors in (freya_errors, thor_errors):
        assert [e for e in errors if "401" not in e] == []
    await freya_ctx.close()
    await thor_ctx.close()


async def test_a_dropped_gateway_connection_resumes_without_loss(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    r = await client.post("/api/v1/guilds", json={"name": "Long Winter"}, headers=freya.headers)
    guild = r.json()["guild"]
    room = guild["system_channel_id"]
    r = await client.post(f"/api/v1/channels/{room}/invites", json={}, headers=freya.headers)
    await client.post(f"/api/v1/invites/{r.json()['invite']['code']}", headers=thor.headers)

    context = await signed_in_context(browser, ORIGIN, "freya", PASSWORD)
    page = await context.new_page()
    sockets: list[Any] = []
    sent: list[list[dict[str, Any]]] = []

    async def through(ws: Any) -> None:
        frames: list[dict[str, Any]] = []
        sent.append(frames)
        server = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            frames.append(json.loads(message))
            server.send(message)

        ws.on_message(from_page)
        sockets.append((ws, server))

    await page.route_web_socket("**/gateway*", through)
    await page.goto(f"{site}/channels/{guild['id']}/{room}")
    await expect(page.get_by_role("textbox", name="Message #general")).to_be_visible(timeout=WAIT)
    await client.post(f"/api/v1/channels/{room}/messages", json={"content": "before the storm"}, headers=thor.headers)
    await expect(article(page, "before the storm")).to_be_visible(timeout=WAIT)

    # The connection drops; messages sent meanwhile wait in the service's resume buffer.
    ws, server = sockets[0]
    await ws.close(code=4000, reason="network gone")
    await server.close()
    for text in ("lost at sea?", "no, found again"):
        r = await client.post(f"/api/v1/channels/{room}/messages", json={"content": text}, headers=thor.headers)
        assert r.status_code == 201, r.text

    await expect(article(page, "no, found again")).to_be_visible(timeout=WAIT)
    await expect(article(page, "lost at sea?")).to_have_count(1)
    await expect(article(page, "no, found again")).to_have_count(1)
    await expect(article(page, "before the storm")).to_have_count(1)
    assert len(sent) >= 2
    assert [f["op"] for f in sent[1] if f["op"] in (2, 6)] == [6]  # RESUME on the new connection, not IDENTIFY
    assert sent[1][0]["d"]["session_id"] and "token" not in sent[1][0]["d"]
    assert [f["op"] for f in sent[0] if f["op"] in (2, 6)] == [2] and "token" not in sent[0][0]["d"]
    await context.close()


async def test_no_serious_accessibility_violation_on_sign_in_and_room(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    r = await client.post("/api/v1/guilds", json={"name": "Long Winter"}, headers=freya.headers)
    guild = r.json()["guild"]
    room = guild["system_channel_id"]
    await client.post(f"/api/v1/channels/{room}/messages", json={"content": "**Skål** <@" + freya.id + ">"},
                      headers=freya.headers)

    page = await browser.new_page()
    await page.goto(f"{site}/login")
    await expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible(timeout=WAIT)
    assert await serious_axe_violations(page) == []
    await page.close()

    for scheme in ("dark", "light"):
        context = await signed_in_context(browser, ORIGIN, "freya", PASSWORD, color_scheme=scheme)
        page = await context.new_page()
        await page.goto(f"{site}/channels/{guild['id']}/{room}")
        await expect(article(page, "Skål")).to_be_visible(timeout=WAIT)
        await expect(page.get_by_role("complementary", name="Members")).to_contain_text("freya", timeout=WAIT)
        assert await serious_axe_violations(page) == [], scheme
        await context.close()

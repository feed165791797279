"""Webhooks, link previews and notifications in a real headless Chromium (docs/client.md, docs/webhooks.md,
docs/push.md): a webhook created through the step-up dialog, its URL copied from the screen and posted to,
the message arriving live in another member's client with the webhook's name and the Webhook badge; a new
URL that refuses the old one; a link preview card under a message that links to a page served on 127.0.0.2;
the notification settings subscribing this browser (or saying in words why it cannot); the service worker
served at /sw.js; no serious accessibility violation on the Webhooks and Notifications screens."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.browser import (
    ORIGIN,
    PASSWORD,
    needs_chromium,
    needs_client,
    open_page,
    serious_axe_violations,
)
from tests.support.factories import add_member
from tests.support.guilds import make_guild, override
from tests.support.http import Api
from tests.support.messages import send

pytestmark = [needs_chromium, needs_client]

WAIT = 10000
PAGE_HOST = "127.0.0.2"
PAGE_HTML = b"""<!doctype html><html><head><title>Fallback title</title>
<meta property="og:site_name" content="Mead Almanac">
<meta property="og:title" content="How to brew mead at home">
<meta property="og:description" content="Honey, water, yeast and patience: a season of brewing in six steps.">
<meta property="og:image" content="http://127.0.0.2/cover.png">
</head><body><p>Brew.</p></body></html>"""


def _vapid_key() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return base64.urlsafe_b64encode(der).rstrip(b"=").decode()


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60"},
            "OUTBOUND_ALLOWED_NETWORKS": f"{PAGE_HOST}/32", "VAPID_PRIVATE_KEY": _vapid_key()}


@asynccontextmanager
async def page_server() -> AsyncIterator[str]:
    """A tiny HTTP server on 127.0.0.2 answering every request with one HTML page (an OpenGraph card)."""
    hits: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        hits.append(request.split(b"\r\n", 1)[0].decode())
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                     + f"Content-Length: {len(PAGE_HTML)}\r\nConnection: close\r\n\r\n".encode() + PAGE_HTML)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, PAGE_HOST, 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://{PAGE_HOST}:{port}"
    finally:
        server.close()
        await server.wait_closed()


def only_expected(errors: list[str]) -> list[str]:
    """Console errors other than the refusals the scenario provokes on purpose (the step-up's 403)."""
    return [e for e in errors if not any(code in e for code in ("403", "404"))]


def article(page: Any, text: str) -> Any:
    return page.get_by_role("log", name="Messages").get_by_role("article").filter(has_text=text)


async def test_a_webhook_made_on_screen_posts_live_and_a_new_url_refuses_the_old(site, browser, client, accounts,
                                                                                  rt, clock):
    from playwright.async_api import expect

    freya_account = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya_account, "Long Winter")
    await add_member(rt, guild["id"], thor)
    general = guild["system_channel_id"]

    freya_ctx, freya, freya_errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/webhooks",
                                                     permissions=["clipboard-read", "clipboard-write"])
    thor_ctx, thor_page, thor_errors = await open_page(browser, "thor", f"/channels/{guild['id']}/{general}")
    await expect(freya.get_by_role("heading", name="Webhooks", exact=True)).to_be_visible(timeout=WAIT)
    await expect(freya.get_by_role("navigation", name="Server settings").get_by_role("link", name="Webhooks")).to_have_attribute(
        "aria-current", "page")
    await expect(freya.get_by_text("No webhooks yet.")).to_be_visible(timeout=WAIT)
    clock.advance(601)  # the sign-in's step-up window has lapsed: creating asks to confirm it is her

    await freya.get_by_role("textbox", name="Webhook name").fill("Build server")
    await freya.get_by_role("combobox", name="Room").select_option(label="#general")
    await freya.get_by_role("button", name="Create webhook").click()
    dialog = freya.get_by_role("dialog", name="Confirm it's you")
    await expect(dialog).to_be_visible(timeout=WAIT)
    await dialog.get_by_label("Password", exact=True).fill(PASSWORD)
    await dialog.get_by_role("button", name="Confirm").click()
    await expect(dialog).to_be_hidden(timeout=WAIT)
    await expect(freya.get_by_role("status").filter(has_text="is created")).to_contain_text("shown only once", timeout=WAIT)
    url_box = freya.get_by_role("textbox", name="URL of Build server")
    url = await url_box.input_value()
    assert url.startswith(f"{ORIGIN}/api/v1/webhooks/")
    await freya.get_by_role("button", name="Copy the URL").click()
    await expect(freya.get_by_role("button", name="Copied the URL")).to_be_visible(timeout=WAIT)
    assert await freya.evaluate("navigator.clipboard.readText()") == url
    card = freya.get_by_role("article", name="Webhook Build server")
    await expect(card).to_contain_text("Posts in #general")
    assert await serious_axe_violations(freya) == []

    # Posted to from outside, without a session: the message arrives live in thor's open room.
    path = urlsplit(url).path
    r = await client.post(path, json={"content": "Build 128 passed", "username": "CI"})
    assert r.status_code == 201, r.text
    message = article(thor_page, "Build 128 passed")
    await expect(message).to_contain_text("CI", timeout=WAIT)
    await expect(message.get_by_text("Webhook", exact=True)).to_be_visible()
    r = await client.post(path, json={"content": "Nightly build finished"})
    await expect(article(thor_page, "Nightly build finished")).to_contain_text("Build server", timeout=WAIT)

    # A new URL, confirmed: the old one is refused from then on, the new one works.
    await card.get_by_role("button", name="New URL for Build server").click()
    confirm = freya.get_by_role("dialog", name="New URL for Build server?")
    await expect(confirm).to_contain_text("stops working at once")
    await confirm.get_by_role("button", name="Make a new URL").click()
    new_box = freya.get_by_role("textbox", name="New URL of Build server")
    await expect(new_box).to_be_visible(timeout=WAIT)
    new_url = await new_box.input_value()
    assert new_url != url and new_url.startswith(f"{ORIGIN}/api/v1/webhooks/")
    assert (await client.post(path, json={"content": "old"})).status_code == 404
    assert (await client.post(urlsplit(new_url).path, json={"content": "after the new URL"})).status_code == 201
    await expect(article(thor_page, "after the new URL")).to_be_visible(timeout=WAIT)

    # Renamed on screen; deleted after confirming.
    await card.get_by_role("button", name="Rename or move Build server").click()
    await card.get_by_role("textbox", name="Name").fill("Release train")
    await card.get_by_role("button", name="Save").click()
    await expect(freya.get_by_role("status").filter(has_text="Release train is saved")).to_be_visible(timeout=WAIT)
    renamed = freya.get_by_role("article", name="Webhook Release train")
    await renamed.get_by_role("button", name="Delete Release train").click()
    await freya.get_by_role("dialog", name="Delete Release train?").get_by_role("button", name="Delete webhook").click()
    await expect(freya.get_by_text("No webhooks yet.")).to_be_visible(timeout=WAIT)
    assert (await client.post(urlsplit(new_url).path, json={"content": "gone"})).status_code == 404

    assert only_expected(freya_errors) == []
    assert only_expected(thor_errors) == []
    await freya_ctx.close()
    await thor_ctx.close()


async def test_a_link_preview_card_appears_under_a_message_with_a_link(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya, "Long Winter")
    general = guild["system_channel_id"]
    await add_member(rt, guild["id"], thor)
    # thor may not embed links here: his message with the same link gets no card.
    await override(client, freya, general, thor.id, "member", deny="EMBED_LINKS")
    context, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/{general}")
    async with page_server() as origin:
        await send(client, thor, general, f"Without a card: {origin}/mead.html")
        await expect(article(page, "Without a card")).to_be_visible(timeout=WAIT)
        composer = page.get_by_role("textbox", name="Message #general")
        await expect(composer).to_be_visible(timeout=WAIT)
        await composer.fill(f"Read this first: {origin}/mead.html")
        await composer.press("Enter")
        message = article(page, "Read this first")
        card = message.get_by_role("complementary", name="Link preview: How to brew mead at home")
        await expect(card).to_be_visible(timeout=WAIT)
        await expect(card).to_contain_text("Mead Almanac")
        await expect(card).to_contain_text("Honey, water, yeast and patience")
        await expect(card.get_by_role("link", name="How to brew mead at home")).to_have_attribute("href", f"{origin}/mead.html")
        # The card's image is on another origin: never loaded (the content policy would refuse it).
        assert await card.locator("img").count() == 0
        # The same link's answer is known by now, yet the message of someone without EMBED_LINKS shows no card.
        await expect(article(page, "Without a card").get_by_role("complementary")).to_have_count(0)
    assert errors == []
    await context.close()


async def test_notification_settings_subscribe_this_browser_or_say_why_not(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    context, page, errors = await open_page(browser, "freya", "/settings/notifications", permissions=["notifications"],
                                            service_workers="allow")
    await expect(page.get_by_role("heading", name="Notifications", exact=True)).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("navigation", name="User settings").get_by_role("link", name="Notifications")).to_have_attribute(
        "aria-current", "page")
    has_push = await page.evaluate("'PushManager' in window && 'serviceWorker' in navigator")
    if not has_push:
        await expect(page.get_by_text("does not support push notifications")).to_be_visible(timeout=WAIT)
    else:
        await expect(page.get_by_text("This browser does not receive notifications.")).to_be_visible(timeout=WAIT)
        await page.get_by_role("button", name="Turn on for this browser").click()
        done = page.get_by_role("status").filter(has_text="now receives notifications")
        refused = page.get_by_role("alert")
        await expect(done.or_(refused)).to_be_visible(timeout=WAIT)
        if await done.count():
            await expect(page.get_by_text("This browser receives notifications.")).to_be_visible()
            [subscription] = (await Api(client).get("/push/subscriptions", freya))["subscriptions"]
            assert subscription["endpoint"].startswith("https://")
            await expect(page.get_by_role("button", name="Send me a test notification")).to_be_visible()
        else:
            # Chromium without a push service: the browser's refusal is shown in words, and the worker is registered.
            await expect(refused).to_contain_text("This browser refused to subscribe to push notifications")
            assert await page.evaluate("navigator.serviceWorker.getRegistration('/').then(r => !!r)")
    assert await serious_axe_violations(page) == []
    await context.close()
    # Chromium says on the console why it refuses (private windows have no Push API); nothing else may fail.
    assert [e for e in errors if "does not support the Push API" not in e] == []


async def test_the_service_worker_is_served_at_the_root(client):
    r = await client.get("/sw.js")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/javascript")
    assert r.headers["cache-control"] == "no-cache"
    assert b"showNotification" in r.content and b"notificationclick" in r.content

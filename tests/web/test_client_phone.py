"""The client on a phone, in a real headless Chromium with touch (docs/client.md, "On phones"): a long press
on a message opens its `More actions` menu, pulling down at the top of the history shows the refresh
indicator, a swipe from the left edge opens the navigation drawer and a swipe left closes it, and the
"Install Meadhall" hint shows once and stays dismissed after a reload."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.browser import needs_chromium, needs_client, watch_errors
from tests.support.chat import SETTINGS, WAIT, article, hall, open_room, post

pytestmark = [needs_chromium, needs_client]

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True, "reduced_motion": "reduce"}

# The event Chromium sends when the app can be installed (headless Chromium never does): the client keeps it
# and offers `Install`, which calls prompt().
FAKE_INSTALL_PROMPT = """() => {
  const e = new Event('beforeinstallprompt', {cancelable: true});
  e.prompt = async () => {};
  e.userChoice = Promise.resolve({outcome: 'dismissed'});
  window.dispatchEvent(e);
}"""


@pytest.fixture
def backend() -> str:
    return "sqlite"


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return SETTINGS


async def touch(cdp: Any, kind: str, x: float = 0, y: float = 0) -> None:
    points = [] if kind == "touchEnd" else [{"x": x, "y": y}]
    await cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})


async def drag(cdp: Any, start: tuple[float, float], end: tuple[float, float], steps: int = 8) -> None:
    await touch(cdp, "touchStart", *start)
    for i in range(1, steps + 1):
        await touch(cdp, "touchMove", start[0] + (end[0] - start[0]) * i / steps, start[1] + (end[1] - start[1]) * i / steps)
        await asyncio.sleep(0.016)


async def test_gestures_and_the_install_hint_on_a_phone(site, browser, client, accounts):
    from playwright.async_api import expect

    freya, thor, guild, room = await hall(client, accounts)
    await post(client, thor, room, "a word from the ship")

    context, page = await open_room(browser, "freya", guild, room, **PHONE)
    errors = watch_errors(page)
    cdp = await context.new_cdp_session(page)
    message = article(page, "a word from the ship")
    await expect(message).to_be_visible(timeout=WAIT)

    # A long press on the message opens its menu; a short tap does not.
    box = await message.get_by_text("a word from the ship").bounding_box()
    x, y = box["x"] + 10, box["y"] + box["height"] / 2
    await touch(cdp, "touchStart", x, y)
    await touch(cdp, "touchEnd")
    await page.wait_for_timeout(700)
    await expect(page.get_by_role("menu", name="More actions")).to_have_count(0)
    await touch(cdp, "touchStart", x, y)
    await page.wait_for_timeout(800)
    await touch(cdp, "touchEnd")
    await expect(page.get_by_role("menu", name="More actions")).to_be_visible()
    await expect(page.get_by_role("menuitem", name="Reply")).to_be_visible()
    log = await page.get_by_role("log", name="Messages").bounding_box()
    await touch(cdp, "touchStart", 370, log["y"] + 8)  # a tap outside closes it
    await touch(cdp, "touchEnd")
    await expect(page.get_by_role("menu", name="More actions")).to_have_count(0)

    # Pulling down at the top of the history (a short room: all of it is in view) shows the indicator.
    await drag(cdp, (200, log["y"] + 40), (200, log["y"] + 240))
    await expect(page.get_by_role("status").filter(has_text="Release to refresh")).to_be_visible()
    await touch(cdp, "touchEnd")
    await expect(page.get_by_role("status").filter(has_text="to refresh")).to_have_count(0, timeout=WAIT)

    # The drawer: a swipe right from the left edge opens it, a swipe left closes it.
    rooms = page.get_by_role("navigation", name="Rooms")
    await expect(rooms).to_be_hidden()
    await drag(cdp, (4, 420), (260, 430))
    await touch(cdp, "touchEnd")
    await expect(rooms).to_be_visible()
    await expect(page.get_by_role("button", name="Open navigation")).to_have_attribute("aria-expanded", "true")
    await drag(cdp, (250, 420), (20, 425))
    await touch(cdp, "touchEnd")
    await expect(rooms).to_be_hidden()

    # The install hint: offered once the browser says the app can be installed; dismissed, it stays away.
    hint = page.get_by_role("region", name="Install Meadhall")
    await expect(hint).to_have_count(0)
    await page.evaluate(FAKE_INSTALL_PROMPT)
    await expect(hint).to_be_visible()
    await expect(hint.get_by_role("button", name="Install")).to_be_visible()
    await hint.get_by_role("button", name="Dismiss").click()
    await expect(hint).to_have_count(0)
    await page.reload()
    await expect(message).to_be_visible(timeout=WAIT)
    await page.evaluate(FAKE_INSTALL_PROMPT)
    await page.wait_for_timeout(300)
    await expect(hint).to_have_count(0)
    assert errors == []
    await context.close()

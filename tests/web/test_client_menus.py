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
from tests.support.guilds import make_guild, room
from tests.support.http import Api
from tests.support.messages import post

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


async def test_room_menu_by_right_click_and_keyboard_mute_mark_read_create_delete(site, browser, client, accounts, rt):
    import re

    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya, "Longhouse")
    await add_member(rt, guild["id"], thor)
    halls = await room(client, freya, guild["id"], name="Halls", type="category")
    lore = await room(client, freya, guild["id"], name="lore", parent_id=halls["id"])
    general = guild["system_channel_id"]

    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/{general}",
                                        permissions=["clipboard-read", "clipboard-write"])
    tctx, tpage, terrors = await open_page(browser, "thor", f"/channels/{guild['id']}/{general}")
    nav = rooms_nav(page)
    lore_link = nav.get_by_role("link", name="lore")
    await expect(lore_link).to_be_visible(timeout=WAIT)
    await expect(lore_link).not_to_have_class(re.compile(r"\bunread\b"))
    await post(client, thor, lore["id"], "The saga of the long winter")
    await expect(lore_link).to_have_class(re.compile(r"\bunread\b"), timeout=WAIT)

    # Right-click opens the room's menu at the pointer, with everything the owner may do.
    await lore_link.click(button="right")
    menu = page.get_by_role("menu", name="Room options")
    await expect(menu).to_be_visible()
    await expect(menu.get_by_role("menuitem")).to_have_text(
        ["Mark as read", "Notification settings", "Mute room", "Copy link", "Edit room", "Delete room"])
    assert await serious_axe_violations(page) == []
    await menu.get_by_role("menuitem", name="Mark as read").click()
    await expect(menu).to_have_count(0)
    await expect(lore_link).not_to_have_class(re.compile(r"\bunread\b"), timeout=WAIT)
    states = (await Api(client).get("/users/@me/read-states", freya, expect=200))["read_states"]
    assert any(s["channel_id"] == lore["id"] and s["last_read_message_id"] is not None for s in states)

    # Copy link.
    await lore_link.click(button="right")
    await menu.get_by_role("menuitem", name="Copy link").click()
    await expect(page.get_by_role("status").filter(has_text="Link to #lore copied")).to_be_attached()
    copied = await page.evaluate("() => navigator.clipboard.readText()")
    assert copied == f"{ORIGIN}/channels/{guild['id']}/{lore['id']}"

    # Keyboard: the "Room options" button, the "Mute room" submenu with ArrowRight / ArrowLeft.
    item = nav.get_by_role("listitem").filter(has=page.get_by_role("link", name="lore"))
    options = item.get_by_role("button", name="Room options")
    await options.focus()
    await page.keyboard.press("Enter")
    await expect(menu.get_by_role("menuitem", name="Notification settings")).to_be_focused()
    await page.keyboard.press("ArrowDown")
    mute = menu.get_by_role("menuitem", name="Mute room")
    await expect(mute).to_be_focused()
    await expect(mute).to_have_attribute("aria-haspopup", "menu")
    await page.keyboard.press("ArrowRight")
    sub = page.get_by_role("menu", name="Mute room")
    await expect(sub.get_by_role("menuitem")).to_have_text(
        ["For 15 minutes", "For 1 hour", "For 8 hours", "For 24 hours", "Until I turn it back on"])
    await expect(sub.get_by_role("menuitem", name="For 15 minutes")).to_be_focused()
    await page.keyboard.press("ArrowLeft")
    await expect(sub).to_have_count(0)
    await expect(mute).to_be_focused()
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("ArrowDown")
    await page.keyboard.press("Enter")
    await expect(menu).to_have_count(0)
    await expect(options).to_be_focused()
    await expect(lore_link).to_have_class(re.compile(r"\bmuted\b"), timeout=WAIT)
    settings = await Api(client).get("/users/@me/notification-settings", freya, expect=200)
    [muted] = [c for c in settings["channels"] if c["channel_id"] == lore["id"]]
    assert muted["level"] == "default" and muted["muted_until"] is not None

    # A muted room is quieter but still marked unread; its menu offers "Unmute room".
    await post(client, thor, lore["id"], "Another verse")
    await expect(lore_link).to_have_class(re.compile(r"\bunread\b"), timeout=WAIT)
    assert await lore_link.evaluate("a => getComputedStyle(a).fontWeight") == "400"
    await expect(lore_link).to_have_attribute("aria-describedby", f"unread-{lore['id']}")
    await expect(page.locator(f"#unread-{lore['id']}")).to_have_text("Unread, Muted")
    await lore_link.click(button="right")
    await menu.get_by_role("menuitem", name="Unmute room").click()
    await expect(lore_link).not_to_have_class(re.compile(r"\bmuted\b"), timeout=WAIT)
    settings = await Api(client).get("/users/@me/notification-settings", freya, expect=200)
    assert [c for c in settings["channels"] if c["channel_id"] == lore["id"]] == []

    # Create a room in the category: it opens, and nobody sees it unread.
    await nav.get_by_role("button", name="Create room in Halls").click()
    dialog = page.get_by_role("dialog", name="Create room")
    await dialog.get_by_role("textbox", name="Room name").fill("mead-talk")
    await dialog.get_by_role("button", name="Create").click()
    await expect(page.get_by_role("textbox", name="Message #mead-talk")).to_be_visible(timeout=WAIT)
    channels = (await Api(client).get(f"/guilds/{guild['id']}/channels", freya, expect=200))["channels"]
    [made] = [c for c in channels if c["name"] == "mead-talk"]
    assert made["parent_id"] == halls["id"] and made["type"] == "text"
    theirs = rooms_nav(tpage).get_by_role("link", name="mead-talk")
    await expect(theirs).to_be_visible(timeout=WAIT)
    await expect(theirs).not_to_have_class(re.compile(r"\bunread\b"))
    await expect(tpage.locator(f"#unread-{made['id']}")).to_have_text("")

    # Delete it, confirmed (Cancel keeps it).
    mine = nav.get_by_role("link", name="mead-talk")
    await mine.click(button="right")
    await menu.get_by_role("menuitem", name="Delete room").click()
    confirm = page.get_by_role("dialog", name="Delete #mead-talk")
    await confirm.get_by_role("button", name="Cancel").click()
    await expect(confirm).to_be_hidden()
    await Api(client).get(f"/channels/{made['id']}", freya, expect=200)
    await mine.click(button="right")
    await menu.get_by_role("menuitem", name="Delete room").click()
    await confirm.get_by_role("button", name="Delete room").click()
    await expect(mine).to_have_count(0, timeout=WAIT)
    await expect(theirs).to_have_count(0, timeout=WAIT)
    await Api(client).get(f"/channels/{made['id']}", freya, expect=404)

    # A plain member: no "Create room", no "Edit room" nor "Delete room" (and no "Mark as read": thor wrote the
    # newest message of lore himself).
    tnav = rooms_nav(tpage)
    await expect(tpage.get_by_role("button", name="Create room")).to_have_count(0)
    await tnav.get_by_role("link", name="lore").click(button="right")
    await expect(tpage.get_by_role("menu", name="Room options").get_by_role("menuitem")).to_have_text(
        ["Notification settings", "Mute room", "Copy link"])
    await tpage.keyboard.press("Escape")

    # Edit room goes to the server settings' rooms page for that room.
    await lore_link.click(button="right")
    await menu.get_by_role("menuitem", name="Edit room").click()
    await expect(page.get_by_role("navigation", name="Server settings")).to_be_visible(timeout=WAIT)
    assert "/settings/rooms" in page.url

    for errs in (errors, terrors):
        assert only_expected(errs) == []
    await ctx.close()
    await tctx.close()


async def test_at_360_px_menus_stay_inside_the_viewport_and_the_pill_inside_the_sidebar(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya, "Longhouse")
    await add_member(rt, guild["id"], thor)
    general = guild["system_channel_id"]
    long_room = await room(client, freya, guild["id"], name="the-longest-room-name-of-the-whole-northern-hall")
    for i in range(4):
        await post(client, thor, long_room["id"], f"<@{freya.id}> verse {i}")

    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/{general}",
                                        viewport={"width": 360, "height": 740})
    # Once the room is shown (READY): the drawer closes whenever the route settles.
    await expect(page.get_by_role("textbox", name="Message #general")).to_be_visible(timeout=WAIT)
    await page.get_by_role("button", name="Open navigation").click()
    nav = rooms_nav(page)
    link = nav.get_by_role("link", name="the-longest-room-name-of-the-whole-northern-hall")
    pill = link.locator(".badge")
    await expect(pill).to_have_text("4", timeout=WAIT)
    pill_box, nav_box = await pill.bounding_box(), await nav.bounding_box()
    assert pill_box and nav_box
    assert pill_box["x"] + pill_box["width"] <= nav_box["x"] + nav_box["width"]
    assert pill_box["width"] >= 14  # not squeezed by the long name

    # A right-click near the right and bottom edges: the menu flips and stays on screen.
    box = await link.bounding_box()
    assert box
    await link.click(button="right", position={"x": box["width"] - 44, "y": 4})  # left of "Room options"
    menu = page.get_by_role("menu", name="Room options")
    await expect(menu).to_be_visible()
    mbox = await menu.bounding_box()
    assert mbox and mbox["x"] >= 0 and mbox["x"] + mbox["width"] <= 360 and mbox["y"] + mbox["height"] <= 740
    # The submenu has no room beside its item at this width: it opens under it, still on screen.
    await menu.get_by_role("menuitem", name="Mute room").press("ArrowRight")
    sub = page.get_by_role("menu", name="Mute room")
    await expect(sub.get_by_role("menuitem", name="For 15 minutes")).to_be_focused()
    sbox = await sub.bounding_box()
    assert sbox and sbox["x"] >= 0 and sbox["x"] + sbox["width"] <= 360 and sbox["y"] + sbox["height"] <= 740
    await page.keyboard.press("Escape")
    await expect(sub).to_have_count(0)
    await page.keyboard.press("Escape")
    await expect(menu).to_have_count(0)
    assert only_expected(errors) == []
    await ctx.close()

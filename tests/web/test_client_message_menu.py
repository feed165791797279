"""The message menu and the keyboard in the message list, in a real headless Chromium (docs/client.md, "Message
menu" and "Keyboard"): `More actions` and a right-click open the same menu with the actions the person may use,
Copy text and Copy link fill the clipboard, Mark unread moves the read mark back, Pin and Reply act; the arrow
keys move between messages, the focused one shows its toolbar, and Tab leaves the list instead of walking
through every message; no serious accessibility violation with the menu open."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.browser import (
    ORIGIN,
    needs_chromium,
    needs_client,
    serious_axe_violations,
    show_scheme,
    watch_errors,
)
from tests.support.chat import SETTINGS, WAIT, article, hall, open_room, post

pytestmark = [needs_chromium, needs_client]

CLIPBOARD = {"permissions": ["clipboard-read", "clipboard-write"]}


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return SETTINGS


def menuitems(page: Any) -> Any:
    return page.get_by_role("menu", name="More actions").get_by_role("menuitem")


async def test_the_menu_offers_what_the_person_may_do_and_does_it(site, browser, client, accounts):
    from playwright.async_api import expect

    freya, thor, guild, room = await hall(client, accounts)
    one = await post(client, thor, room, "one **horn**")
    two = await post(client, thor, room, f"two horns for <@{freya.id}>")
    await post(client, thor, room, "three horns")
    mine = await post(client, freya, room, "my own words")

    context, page = await open_room(browser, "freya", guild, room, **CLIPBOARD)
    errors = watch_errors(page)
    second = article(page, "two horns")
    await expect(second).to_be_visible(timeout=WAIT)

    # The owner on thor's message: no Edit (not hers), Pin and Delete (she manages messages).
    await second.hover()
    await second.get_by_role("button", name="More actions").click()
    await expect(menuitems(page)).to_have_text(["Reply", "Add reaction", "Pin", "Copy text", "Copy link", "Mark unread", "Delete"])
    for scheme in ("dark", "light"):
        await show_scheme(page, scheme)
        assert await serious_axe_violations(page) == [], scheme
    await page.get_by_role("menuitem", name="Copy text").click()
    await expect(page.get_by_role("menu")).to_have_count(0)
    assert await page.evaluate("navigator.clipboard.readText()") == "two horns for @freya"
    await expect(second.get_by_role("status")).to_have_text("Text copied.")

    await second.get_by_role("button", name="More actions").click()
    await page.get_by_role("menuitem", name="Copy link").click()
    assert await page.evaluate("navigator.clipboard.readText()") == f"{ORIGIN}/channels/{guild}/{room}/{two}"

    # Pin from the menu; the menu then offers Unpin.
    await second.get_by_role("button", name="More actions").click()
    await page.get_by_role("menuitem", name="Pin").click()
    await expect(second.get_by_role("button", name="Unpin")).to_be_visible(timeout=WAIT)
    r = await client.get(f"/api/v1/channels/{room}/pins", headers=thor.headers)
    assert [m["id"] for m in r.json()["messages"]] == [two]
    await second.get_by_role("button", name="More actions").click()
    await expect(page.get_by_role("menuitem", name="Unpin")).to_be_visible()
    await page.keyboard.press("Escape")
    await expect(page.get_by_role("menu")).to_have_count(0)
    await expect(second.get_by_role("button", name="More actions")).to_be_focused()

    # Mark unread: the read mark goes back to the message before, and stays while the room is open.
    await second.get_by_role("button", name="More actions").click()
    await page.get_by_role("menuitem", name="Mark unread").click()
    await expect(second.get_by_role("status")).to_have_text("Marked unread from here.", timeout=WAIT)
    r = await client.get("/api/v1/users/@me/read-states", headers=freya.headers)
    marks = {s["channel_id"]: s["last_read_message_id"] for s in r.json()["read_states"]}
    assert marks[room] == one
    await post(client, thor, room, "four horns")
    await expect(article(page, "four horns")).to_be_visible(timeout=WAIT)
    r = await client.get("/api/v1/users/@me/read-states", headers=freya.headers)
    assert {s["channel_id"]: s["last_read_message_id"] for s in r.json()["read_states"]}[room] == one

    # Right-click opens the same menu at the pointer; Reply from the keyboard.
    third = article(page, "three horns")
    await third.click(button="right")
    await expect(menuitems(page).first).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(page.get_by_text("Replying to thor")).to_be_visible()

    # Her own message: Edit from the menu opens the editor.
    own = article(page, "my own words")
    await own.click(button="right")
    await expect(menuitems(page)).to_have_text(["Reply", "Add reaction", "Edit", "Pin", "Copy text", "Copy link", "Mark unread", "Delete"])
    await page.get_by_role("menuitem", name="Edit").click()
    await expect(page.get_by_role("textbox", name="Edit message")).to_be_focused()
    await page.keyboard.press("Escape")
    await expect(own).to_be_focused()

    # thor, a plain member: no Pin, no Delete on freya's message, Edit and Delete on his own.
    thor_ctx, thor_page = await open_room(browser, "thor", guild, room)
    theirs = article(thor_page, "my own words")
    await expect(theirs).to_be_visible(timeout=WAIT)
    await theirs.click(button="right")
    await expect(menuitems(thor_page)).to_have_text(["Reply", "Add reaction", "Copy text", "Copy link", "Mark unread"])
    await thor_page.keyboard.press("Escape")
    await article(thor_page, "three horns").click(button="right")
    await expect(menuitems(thor_page)).to_have_text(["Reply", "Add reaction", "Edit", "Copy text", "Copy link", "Mark unread", "Delete"])
    assert errors == []
    assert mine
    await thor_ctx.close()
    await context.close()


async def test_arrow_keys_move_between_messages_and_tab_leaves_the_list(site, browser, client, accounts):
    from playwright.async_api import expect

    freya, thor, guild, room = await hall(client, accounts)
    for i in range(6):
        await post(client, thor, room, f"verse {i} [saga](https://example.com/{i})")

    context, page = await open_room(browser, "freya", guild, room)
    errors = watch_errors(page)
    log = page.get_by_role("log", name="Messages")
    composer = page.get_by_role("textbox", name="Message #general")
    await expect(article(page, "verse 5")).to_be_visible(timeout=WAIT)

    # From the composer, Shift+Tab reaches the list as one stop, not the newest message's last control.
    await composer.focus()
    for _ in range(4):  # past the composer's own buttons before it
        await page.keyboard.press("Shift+Tab")
        if await log.evaluate("el => el.contains(document.activeElement)"):
            break
    await expect(log).to_be_focused()

    # Arrow up starts at the newest message on screen and moves up; its toolbar shows.
    await page.keyboard.press("ArrowUp")
    await expect(article(page, "verse 5")).to_be_focused()
    await page.keyboard.press("ArrowUp")
    await page.keyboard.press("ArrowUp")
    verse3 = article(page, "verse 3")
    await expect(verse3).to_be_focused()
    await expect(verse3.get_by_role("toolbar", name="Message actions")).to_have_css("opacity", "1")
    await page.keyboard.press("PageDown")
    await expect(article(page, "verse 4")).to_be_focused()
    await page.keyboard.press("Home")
    await expect(log.get_by_role("article").first).to_be_focused()  # the room's first message (thor joining)
    await page.keyboard.press("ArrowDown")
    await expect(log.get_by_role("article").nth(1)).to_be_focused()
    await page.keyboard.press("End")
    await expect(article(page, "verse 5")).to_be_focused()
    await page.keyboard.press("ArrowUp")
    verse4 = article(page, "verse 4")
    await expect(verse4).to_be_focused()

    # Tab walks this message's own controls, then leaves the list for the composer.
    visited: list[str] = []
    for _ in range(12):
        await page.keyboard.press("Tab")
        where = await page.evaluate("""() => {
            const a = document.activeElement;
            const art = a.closest('article');
            return (art ? art.textContent.match(/verse \\d/)?.[0] + ':' : '') + (a.getAttribute('aria-label') || a.textContent.trim());
        }""")
        visited.append(where)
        if not await log.evaluate("el => el.contains(document.activeElement)"):
            break
    await expect(page.get_by_role("button", name="Attach files")).to_be_focused()  # the composer's first control
    assert all(v.startswith("verse 4:") for v in visited[:-1]), visited
    assert "verse 4:More actions" in visited, visited

    # Shift+Tab from a message's first control goes back to the message, then to the list.
    await verse4.focus()
    await page.keyboard.press("Tab")
    await page.keyboard.press("Shift+Tab")
    await expect(verse4).to_be_focused()
    await page.keyboard.press("Shift+Tab")
    await expect(log).to_be_focused()
    assert errors == []
    await context.close()

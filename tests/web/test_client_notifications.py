"""Notification levels and desktop notifications in a real headless Chromium (docs/client.md, "Notification
levels"): the dialog `Notification settings` of a server and of a room saves each choice when made (level,
suppress @everyone, mute and unmute) as the service then holds it, and follows a change made elsewhere live
(NOTIFICATION_SETTINGS_UPDATE); desktop notifications (Chromium's permission granted, the Notification
constructor recorded by an init script) appear for what the effective level lets through, never for one's own
messages nor for the room the focused tab shows, and a click opens the room; the permission is asked only from
the settings' button, never on load; the tab title carries the count."""

from __future__ import annotations

import re
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
from tests.support.conversations import open_dm
from tests.support.factories import add_member
from tests.support.guilds import make_guild, room
from tests.support.http import Api
from tests.support.messages import post
from tests.support.social import befriend

pytestmark = [needs_chromium, needs_client]

WAIT = 10000

# Records each notification the page makes (title, body, and a way to click it), lets the test say whether the
# tab has the focus, and answers the permission as `window.__permission` says (asking is counted).
RECORDER = """
(() => {
  window.__notes = [];
  window.__asked = 0;
  window.__focused = true;
  window.__permission = window.__permission || "granted";
  Document.prototype.hasFocus = function () { return window.__focused; };
  class Recorded {
    constructor(title, options) {
      this.title = title;
      this.body = (options && options.body) || "";
      this.onclick = null;
      window.__notes.push(this);
    }
    close() {}
    static get permission() { return window.__permission; }
    static async requestPermission() { window.__asked += 1; window.__permission = "granted"; return "granted"; }
  }
  window.Notification = Recorded;
})();
"""


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60"}}


async def open_settings(page: Any, room_name: str | None) -> Any:
    """The dialog `Notification settings` of the server (room_name None, from the server menu) or of a room."""
    if room_name is None:
        await page.get_by_role("button", name="Longhouse", exact=True).click()
        await page.get_by_role("menu", name="Longhouse").get_by_role("menuitem", name="Notification settings").click()
    else:
        await page.get_by_role("navigation", name="Rooms").get_by_role("link", name=room_name).click(button="right")
        await page.get_by_role("menu", name="Room options").get_by_role("menuitem", name="Notification settings").click()
    return page.get_by_role("dialog", name="Notification settings")


async def choose_level(page: Any, room_name: str | None, level: str) -> None:
    from playwright.async_api import expect

    dialog = await open_settings(page, room_name)
    await dialog.get_by_role("radio", name=level).check()
    await expect(dialog.get_by_role("status")).to_have_text(f"{level} saved.", timeout=WAIT)
    await dialog.get_by_role("button", name="Done").click()


async def settings_of(client: Any, who: Any) -> Any:
    return await Api(client).get("/users/@me/notification-settings", who, expect=200)


async def test_notification_settings_dialog_saves_each_choice_and_follows_changes_live(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    guild = await make_guild(client, freya, "Longhouse")
    general = guild["system_channel_id"]
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/{general}")

    # The server's settings from the server menu: the defaults first.
    await page.get_by_role("button", name="Longhouse", exact=True).click()
    await page.get_by_role("menu", name="Longhouse").get_by_role("menuitem", name="Notification settings").click()
    dialog = page.get_by_role("dialog", name="Notification settings")
    await expect(dialog).to_be_visible()
    await expect(dialog.get_by_role("radio", name="Only mentions")).to_be_checked()
    await expect(dialog.get_by_role("radio", name="Use server default")).to_have_count(0)
    assert await serious_axe_violations(page) == []

    await dialog.get_by_role("radio", name="All messages").check()
    await expect(dialog.get_by_role("status")).to_have_text("All messages saved.", timeout=WAIT)
    [mine] = (await settings_of(client, freya))["guilds"]
    assert (mine["guild_id"], mine["level"], mine["suppress_everyone"]) == (guild["id"], "all", False)

    await dialog.get_by_role("checkbox", name="Suppress @everyone").check()
    await expect(dialog.get_by_role("status")).to_have_text("@everyone no longer notifies you here.", timeout=WAIT)
    [mine] = (await settings_of(client, freya))["guilds"]
    assert (mine["level"], mine["suppress_everyone"]) == ("all", True)

    # Mute for an hour, then unmute; the level and @everyone stay as chosen.
    await dialog.get_by_role("button", name="Mute").click()
    mute_menu = page.get_by_role("menu", name="Mute")
    await expect(mute_menu.get_by_role("menuitem")).to_have_text(
        ["For 15 minutes", "For 1 hour", "For 8 hours", "For 24 hours", "Until I turn it back on"])
    await mute_menu.get_by_role("menuitem", name="For 1 hour").click()
    # The status says the answer is in (an older setting's event may still be on its way and show for a moment).
    await expect(dialog.get_by_role("status")).to_have_text("Muted for 1 hour.", timeout=WAIT)
    await expect(dialog.get_by_role("button", name="Unmute")).to_be_visible(timeout=WAIT)
    await expect(dialog).to_contain_text("Muted until")
    [mine] = (await settings_of(client, freya))["guilds"]
    assert mine["muted_until"] is not None and (mine["level"], mine["suppress_everyone"]) == ("all", True)
    # Muting the server dims its rooms in the list.
    await expect(page.get_by_role("navigation", name="Rooms").get_by_role("link", name="general")).to_have_class(
        re.compile(r"\bmuted\b"))
    await dialog.get_by_role("button", name="Unmute").click()
    await expect(dialog.get_by_role("status")).to_have_text("Unmuted.", timeout=WAIT)
    await expect(dialog.get_by_role("button", name="Mute")).to_be_visible(timeout=WAIT)
    [mine] = (await settings_of(client, freya))["guilds"]
    assert mine["muted_until"] is None

    # A change made elsewhere (another device) shows here live.
    await Api(client).put(f"/users/@me/notification-settings/guilds/{guild['id']}", freya,
                          json={"level": "nothing"}, expect=200)
    await expect(dialog.get_by_role("radio", name="Nothing")).to_be_checked(timeout=WAIT)
    await expect(dialog.get_by_role("checkbox", name="Suppress @everyone")).not_to_be_checked()
    await dialog.get_by_role("button", name="Done").click()

    # A room's settings from its menu: it follows the server until told otherwise.
    await page.get_by_role("navigation", name="Rooms").get_by_role("link", name="general").click(button="right")
    await page.get_by_role("menu", name="Room options").get_by_role("menuitem", name="Notification settings").click()
    await expect(dialog).to_contain_text("#general in Longhouse")
    await expect(dialog.get_by_role("radio", name="Use server default")).to_be_checked()
    await expect(dialog.get_by_role("checkbox", name="Suppress @everyone")).to_have_count(0)
    await dialog.get_by_role("radio", name="Only mentions").check()
    await expect(dialog.get_by_role("status")).to_have_text("Only mentions saved.", timeout=WAIT)
    [room_setting] = (await settings_of(client, freya))["channels"]
    assert (room_setting["channel_id"], room_setting["level"]) == (general, "mentions")
    await dialog.get_by_role("radio", name="Use server default").check()
    await expect(dialog.get_by_role("status")).to_have_text("This room follows the server's setting.", timeout=WAIT)
    assert (await settings_of(client, freya))["channels"] == []
    assert await serious_axe_violations(page) == []

    assert only_expected(errors) == []
    await ctx.close()


async def test_desktop_notifications_follow_the_levels_and_open_the_room(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya, "Longhouse")
    await add_member(rt, guild["id"], thor)
    general = guild["system_channel_id"]
    lore = await room(client, freya, guild["id"], name="lore")
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/{general}",
                                        permissions=["notifications"])
    await ctx.add_init_script(RECORDER)
    await page.reload()
    composer = page.get_by_role("textbox", name="Message #general")
    await expect(composer).to_be_visible(timeout=WAIT)
    await expect(page).to_have_title("#general · Longhouse")

    async def notes_become(expected: list[list[str]]) -> None:
        """Waits until the recorded notifications are exactly `expected` (then fails with what they are)."""
        try:
            await page.wait_for_function(
                "want => JSON.stringify(window.__notes.map(n => [n.title, n.body])) === JSON.stringify(want)",
                arg=expected, timeout=WAIT)
        except Exception:
            assert await page.evaluate("() => window.__notes.map(n => [n.title, n.body])") == expected

    # Default level (only mentions): a plain message in another room makes none, a mention does; the tab
    # title counts it.
    await post(client, thor, lore["id"], "Plain words")
    await post(client, thor, lore["id"], f"<@{freya.id}> the mead is ready")
    await notes_become([["thor (#lore, Longhouse)", "@freya the mead is ready"]])
    await expect(page).to_have_title("(1) #general · Longhouse", timeout=WAIT)

    # The room the focused tab shows makes none; the same room while the tab is elsewhere does.
    shown = page.get_by_role("log", name="Messages").get_by_role("article")
    await post(client, thor, general, f"<@{freya.id}> here")
    await expect(shown.filter(has_text="@freya here")).to_be_visible(timeout=WAIT)
    await page.evaluate("() => { window.__focused = false; }")
    await post(client, thor, general, f"<@{freya.id}> still here?")
    await notes_become([
        ["thor (#lore, Longhouse)", "@freya the mead is ready"],
        ["thor (#general, Longhouse)", "@freya still here?"],
    ])

    # Settings changed in the dialogs (each applied once its answer is in): the server at "all messages" lets
    # plain messages through; a room at "nothing" none, not even a mention; one's own messages never.
    await choose_level(page, None, "All messages")
    await choose_level(page, "lore", "Nothing")
    await page.evaluate("() => { window.__notes = []; }")
    await post(client, thor, lore["id"], f"<@{freya.id}> you will not hear this")
    await post(client, freya, general, "My own words")
    await post(client, thor, general, "Plain words for all")
    await notes_become([["thor (#general, Longhouse)", "Plain words for all"]])

    # A muted server: nothing at all, until unmuted.
    dialog = await open_settings(page, None)
    await dialog.get_by_role("button", name="Mute").click()
    await page.get_by_role("menu", name="Mute").get_by_role("menuitem", name="For 8 hours").click()
    await expect(dialog.get_by_role("status")).to_have_text("Muted for 8 hours.", timeout=WAIT)
    await page.evaluate("() => { window.__notes = []; }")
    await post(client, thor, general, f"<@{freya.id}> muted")
    await expect(shown.filter(has_text="@freya muted")).to_be_visible(timeout=WAIT)
    await dialog.get_by_role("button", name="Unmute").click()
    await expect(dialog.get_by_role("status")).to_have_text("Unmuted.", timeout=WAIT)
    await dialog.get_by_role("button", name="Done").click()
    await post(client, thor, lore["id"], "nothing here either")
    await post(client, thor, general, "after the mute")
    await notes_become([["thor (#general, Longhouse)", "after the mute"]])

    # Clicking a notification opens its room.
    await choose_level(page, "lore", "All messages")
    await page.evaluate("() => { window.__notes = []; }")
    await post(client, thor, lore["id"], "Come to lore")
    await notes_become([["thor (#lore, Longhouse)", "Come to lore"]])
    await page.evaluate("() => window.__notes[0].onclick()")
    await expect(page).to_have_url(f"{ORIGIN}/channels/{guild['id']}/{lore['id']}", timeout=WAIT)
    await expect(page.get_by_role("textbox", name="Message #lore")).to_be_visible()

    assert only_expected(errors) == []
    await ctx.close()


async def test_the_permission_is_asked_only_from_the_settings_button(site, browser, client, accounts):
    from playwright.async_api import expect

    await accounts.register("freya")
    ctx, page, errors = await open_page(browser, "freya", "/channels/@me")
    await ctx.add_init_script("window.__permission = 'default';" + RECORDER)
    await page.goto(f"{ORIGIN}/settings/notifications")
    panel = page.get_by_role("region", name="Desktop notifications")
    await expect(panel).to_contain_text("Desktop notifications are off.", timeout=WAIT)
    assert await page.evaluate("() => window.__asked") == 0  # never on load
    await panel.get_by_role("button", name="Turn on desktop notifications").click()
    await expect(panel).to_contain_text("Desktop notifications are on for this browser.")
    assert await page.evaluate("() => window.__asked") == 1
    assert await serious_axe_violations(page) == []
    assert only_expected(errors) == []
    await ctx.close()


async def test_a_conversation_has_its_notification_settings_in_its_header(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    api = Api(client)
    await befriend(api, freya, thor)
    dm = await open_dm(api, freya, thor)
    ctx, page, errors = await open_page(browser, "freya", f"/channels/@me/{dm['id']}")
    await page.get_by_role("button", name="Notification settings").click()
    dialog = page.get_by_role("dialog", name="Notification settings")
    # A conversation notifies every message by default and has no server to follow.
    await expect(dialog.get_by_role("radio", name="All messages")).to_be_checked(timeout=WAIT)
    await expect(dialog.get_by_role("radio", name="Use server default")).to_have_count(0)
    await dialog.get_by_role("radio", name="Nothing").check()
    await expect(dialog.get_by_role("status")).to_have_text("Nothing saved.", timeout=WAIT)
    mine = (await settings_of(client, freya))["channels"]
    assert [(s["channel_id"], s["level"]) for s in mine] == [(dm["id"], "nothing")]
    assert await serious_axe_violations(page) == []
    assert only_expected(errors) == []
    await ctx.close()

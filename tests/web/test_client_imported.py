"""Imported authors in a real headless Chromium (docs/imported-authors.md): their messages and their line in
the members list carry the `Imported` badge with its tooltip; their profile card says the history was
imported and how its writer claims it, and offers neither "Message" nor "Add friend" (which a local member's
card does); the administration's user list filters imported authors. axe-core finds no serious violation
on the card and on the filtered list, in the dark and light themes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.admin import admin_account
from tests.support.admin_browser import admin_context
from tests.support.browser import (
    ORIGIN,
    needs_chromium,
    needs_client,
    open_page,
    serious_axe_violations,
    show_scheme,
)
from tests.support.factories import add_member
from tests.support.guilds import make_guild
from tests.support.imported import IMPORTED_TIP, authored_message, imported_author

pytestmark = [needs_chromium, needs_client]

WAIT = 10000


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60",
                                                  "auth.login": "1000/60"}}


async def test_badge_and_profile_card_of_an_imported_author(site, browser, client, accounts, rt):
    owner = await accounts.register("owner")
    local = await accounts.register("freya")
    guild = await make_guild(client, owner, "Longhouse")
    await add_member(rt, guild["id"], local)
    ghost = await imported_author(rt, "old_sigurd", guild["id"], display_name="Sigurd")
    await authored_message(rt, guild["system_channel_id"], ghost.id, "Written long ago, elsewhere")
    context, page, _errors = await open_page(browser, "owner", f"/channels/{guild['id']}/{guild['system_channel_id']}")

    message = page.get_by_role("article").filter(has_text="Written long ago, elsewhere")
    badge = message.locator(".badge-imported")
    await badge.wait_for(timeout=WAIT)
    assert await badge.get_attribute("title") == IMPORTED_TIP
    members = page.get_by_role("complementary", name="Members")
    assert await members.locator("li").filter(has_text="Sigurd").locator(".badge-imported").count() == 1
    assert await members.locator("li").filter(has_text="freya").locator(".badge-imported").count() == 0

    await message.get_by_role("button", name="Sigurd").click()
    card = page.get_by_role("dialog", name="Sigurd")
    await card.wait_for(timeout=WAIT)
    await card.get_by_text("These messages were brought here from another service").wait_for(timeout=WAIT)
    await card.get_by_text("ask the operator of this instance").wait_for(timeout=WAIT)
    assert await card.get_by_role("button", name="Message").count() == 0
    assert await card.get_by_role("button", name="Add friend").count() == 0
    for scheme in ("dark", "light"):
        await show_scheme(page, scheme)
        assert await serious_axe_violations(page) == []
    await card.get_by_role("button", name="Close").click()
    await card.wait_for(state="hidden", timeout=WAIT)

    # A local member's card offers both, and "Add friend" asks.
    await members.get_by_role("button", name="freya").click()
    card = page.get_by_role("dialog", name="freya")
    await card.get_by_role("button", name="Message").wait_for(timeout=WAIT)
    await card.get_by_role("button", name="Add friend").click()
    await card.get_by_role("status").filter(has_text="Friend request sent").wait_for(timeout=WAIT)
    await context.close()


async def test_the_user_list_filters_imported_authors(site, browser, client, accounts, rt):
    await accounts.register("freya")
    await imported_author(rt, "old_sigurd", display_name="Sigurd")
    await imported_author(rt, "old_gudrun", display_name="Gudrun")
    odin = await admin_account(client, accounts, rt, "odin")
    context = await admin_context(browser, rt, odin)
    page = await context.new_page()
    await page.goto(f"{ORIGIN}/admin")
    await page.get_by_role("status").filter(has_text="4 users").wait_for(timeout=WAIT)
    await page.get_by_role("checkbox", name="Imported authors").check()
    await page.get_by_role("status").filter(has_text="2 users match").wait_for(timeout=WAIT)
    table = page.get_by_role("table", name="Users")
    assert sorted(await table.locator(".name").all_inner_texts()) == ["Gudrun", "Sigurd"]
    assert await table.locator(".badge.imported").all_inner_texts() == ["Imported", "Imported"]
    for scheme in ("dark", "light"):
        await show_scheme(page, scheme)
        assert await serious_axe_violations(page) == []
    await page.get_by_role("checkbox", name="Imported authors").uncheck()
    await page.get_by_role("status").filter(has_text="4 users").wait_for(timeout=WAIT)
    await context.close()

"""Server-wide search in a real headless Chromium (docs/search.md, "In the web client"): the `Search` box in a
server's header searches every room the person may read, results grouped by room, each an article naming its
room; `in: #room` and `from: @name` narrow it, with completion for both; `Jump` opens the result's room at the
message; a direct conversation keeps its own search; no serious axe violation in either theme or at 360 px."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.browser import ORIGIN, needs_chromium, needs_client, open_page, serious_axe_violations
from tests.support.factories import add_member
from tests.support.guilds import make_guild, override, room
from tests.support.messages import post

pytestmark = [needs_chromium, needs_client]

WAIT = 10000


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"global": "100000/60", "messages.send": "100000/60",
                                                  "search": "1000/60"}}


async def winter(client: Any, accounts: Any, rt: Any) -> tuple[Any, Any, str, dict[str, str]]:
    """freya's server with thor in it, rooms general, lore and vault (which thor cannot see), and mead talk."""
    freya, thor = await accounts.register("freya"), await accounts.register("thor")
    guild = await make_guild(client, freya, "Long Winter")
    await add_member(rt, guild["id"], thor)
    rooms = {"general": guild["system_channel_id"], "lore": (await room(client, freya, guild["id"], name="lore"))["id"],
             "vault": (await room(client, freya, guild["id"], name="vault"))["id"]}
    await override(client, freya, rooms["vault"], guild["id"], "role", deny="VIEW_CHANNEL")
    await post(client, thor, rooms["general"], "the mead is in the cellar")
    await post(client, freya, rooms["lore"], "a mead recipe from the north")
    for i in range(60):  # the recipe is further back than the first page of lore
        await post(client, freya, rooms["lore"], f"chatter {i}")
    await post(client, freya, rooms["vault"], "the mead secret")
    return freya, thor, guild["id"], rooms


def log_article(page: Any, text: str) -> Any:
    return page.get_by_role("log", name="Messages").get_by_role("article").filter(has_text=text)


async def test_the_header_box_searches_the_server_with_filters_and_jumps(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    _freya, _thor, guild, rooms = await winter(client, accounts, rt)
    context, page, errors = await open_page(browser, "thor", f"/channels/{guild}/{rooms['general']}")
    box = page.get_by_role("textbox", name="Search", exact=True)
    await box.fill("mead")
    await box.press("Enter")
    results = page.get_by_role("region", name="Search results")
    hits = results.get_by_role("article")
    await expect(hits).to_have_count(2, timeout=WAIT)  # not the vault's, which thor cannot see
    await expect(hits.nth(0)).to_contain_text("lore")
    await expect(hits.nth(0)).to_contain_text("a mead recipe from the north")
    await expect(hits.nth(1)).to_contain_text("general")
    await expect(hits.nth(1)).to_contain_text("thor")
    await expect(results.get_by_role("heading")).to_have_text(["#lore", "#general"])

    # `in: #` offers the rooms; Enter takes the one chosen, a second Enter searches.
    await box.fill("")
    await box.press_sequentially("mead in: #lo")
    rooms_list = page.get_by_role("listbox", name="Rooms")
    await expect(rooms_list.get_by_role("option")).to_have_count(1, timeout=WAIT)
    await expect(rooms_list.get_by_role("option")).to_contain_text("lore")
    await box.press("Enter")
    await expect(box).to_have_value("mead in: #lore ")
    await box.press("Enter")
    await expect(hits).to_have_count(1, timeout=WAIT)
    await expect(results.get_by_role("status")).to_have_text("1 result for “mead” in #lore")

    # `from: @` offers the members, by name or username.
    await box.fill("")
    await box.press_sequentially("mead from: @fre")
    people = page.get_by_role("listbox", name="Members")
    await expect(people.get_by_role("option")).to_have_count(1, timeout=WAIT)
    await box.press("Tab")
    await expect(box).to_have_value("mead from: @freya ")
    await box.press("Enter")
    await expect(hits).to_have_count(1, timeout=WAIT)
    await expect(hits.first).to_contain_text("a mead recipe from the north")

    await box.fill("mead from: @nobody")
    await box.press("Enter")
    await expect(results.get_by_role("status")).to_have_text("No room or member is named @nobody in this server.")

    # Jump opens the other room and brings the message, older than its first page, into view.
    await box.fill("recipe")
    await box.press("Enter")
    await hits.first.get_by_role("button", name="Jump").click()
    await expect(page).to_have_url(f"{ORIGIN}/channels/{guild}/{rooms['lore']}", timeout=WAIT)
    await expect(log_article(page, "a mead recipe from the north")).to_be_in_viewport(timeout=WAIT)
    await expect(hits).to_have_count(1)  # the results stay beside the room
    assert errors == []
    await context.close()


async def test_a_conversation_keeps_its_own_search(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    _freya, thor, _guild, _rooms = await winter(client, accounts, rt)
    freya_id = _freya.id
    r = await client.post("/api/v1/users/@me/channels", json={"recipient_id": freya_id}, headers=thor.headers)
    assert r.status_code in (200, 201), r.text
    dm = r.json()["channel"]["id"]
    await post(client, thor, dm, "mead for two")
    context, page, errors = await open_page(browser, "thor", f"/channels/@me/{dm}")
    await expect(log_article(page, "mead for two")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("textbox", name="Search", exact=True)).to_have_count(0)
    await page.get_by_role("button", name="Search messages").click()
    panel = page.get_by_role("complementary", name="Search")
    await panel.get_by_role("searchbox", name="Search messages").fill("mead")
    await panel.get_by_role("searchbox", name="Search messages").press("Enter")
    await expect(panel.get_by_role("listitem")).to_have_count(1, timeout=WAIT)  # not the server's mead
    assert errors == []
    await context.close()


@pytest.mark.parametrize("scheme", ["dark", "light"])
async def test_no_serious_axe_violation_in_either_theme_and_on_a_phone(site, browser, client, accounts, rt, scheme):
    from playwright.async_api import expect

    _freya, _thor, guild, rooms = await winter(client, accounts, rt)
    for size in ({"width": 1280, "height": 800}, {"width": 360, "height": 740}):
        context, page, errors = await open_page(browser, "thor", f"/channels/{guild}/{rooms['general']}",
                                                color_scheme=scheme, viewport=size)
        box = page.get_by_role("textbox", name="Search", exact=True)
        await box.press_sequentially("mead in: #")
        await expect(page.get_by_role("listbox", name="Rooms")).to_be_visible(timeout=WAIT)
        assert await serious_axe_violations(page) == [], (scheme, size, "completion")
        await box.fill("mead")
        await box.press("Enter")
        await expect(page.get_by_role("region", name="Search results").get_by_role("article")).to_have_count(
            2, timeout=WAIT)
        assert await serious_axe_violations(page) == [], (scheme, size, "results")
        assert errors == []
        await context.close()

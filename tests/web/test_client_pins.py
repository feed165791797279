"""The pinned messages of a room in a real headless Chromium (docs/client.md, "Pins"): `Pinned messages` in the
room's header opens the list, each pin an article with its author, time and content; `Jump` scrolls the room to
a pin far back in the history; pins and unpins made elsewhere arrive live; `Unpin` only for those who may; at
360 px the panel steps aside after a jump; no serious accessibility violation in either theme."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.browser import (
    needs_chromium,
    needs_client,
    serious_axe_violations,
    show_scheme,
    watch_errors,
)
from tests.support.chat import SETTINGS, WAIT, article, hall, open_room, post

pytestmark = [needs_chromium, needs_client]


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return SETTINGS


async def pin(client: Any, who: Any, room: str, message: str, *, on: bool = True) -> None:
    call = client.put if on else client.delete
    r = await call(f"/api/v1/channels/{room}/pins/{message}", headers=who.headers)
    assert r.status_code == 204, r.text


async def test_pins_are_listed_jumped_to_and_unpinned_live(site, browser, client, accounts):
    from playwright.async_api import expect

    freya, thor, guild, room = await hall(client, accounts)
    oath = await post(client, thor, room, "I swear the **oath** of the hall")
    for i in range(55):  # further back than the first page (50) the room loads
        await post(client, freya, room, f"chatter {i}")
    await pin(client, freya, room, oath)

    context, page = await open_room(browser, "freya", guild, room)
    errors = watch_errors(page)
    await expect(article(page, "chatter 54")).to_be_visible(timeout=WAIT)
    await expect(article(page, "I swear")).to_have_count(0)

    await page.get_by_role("button", name="Pinned messages").click()
    panel = page.get_by_role("region", name="Pinned messages")
    pinned = panel.get_by_role("article")
    await expect(pinned).to_have_count(1, timeout=WAIT)
    await expect(pinned).to_contain_text("thor")
    await expect(pinned).to_contain_text("Today")
    await expect(pinned.locator("strong").filter(has_text="oath")).to_be_visible()  # the content's markdown
    for scheme in ("dark", "light"):
        await show_scheme(page, scheme)
        assert await serious_axe_violations(page) == [], scheme

    await pinned.get_by_role("button", name="Jump").click()
    await expect(article(page, "I swear")).to_be_in_viewport(timeout=WAIT)

    # A pin made elsewhere arrives live, newest first; an unpin made elsewhere leaves.
    late = await post(client, thor, room, "the horn is found")
    await pin(client, freya, room, late)
    await expect(pinned).to_have_count(2, timeout=WAIT)
    await expect(pinned.first).to_contain_text("the horn is found")
    await pin(client, freya, room, late, on=False)
    await expect(pinned).to_have_count(1, timeout=WAIT)

    # thor may not unpin; he may jump.
    thor_ctx, thor_page = await open_room(browser, "thor", guild, room)
    await thor_page.get_by_role("button", name="Pinned messages").click()
    thor_panel = thor_page.get_by_role("region", name="Pinned messages")
    await expect(thor_panel.get_by_role("article")).to_have_count(1, timeout=WAIT)
    await expect(thor_panel.get_by_role("button", name="Jump")).to_be_visible()
    await expect(thor_panel.get_by_role("button", name="Unpin")).to_have_count(0)

    # freya unpins from the panel: gone here, for the service, and live in thor's panel.
    await pinned.get_by_role("button", name="Unpin").click()
    await expect(pinned).to_have_count(0, timeout=WAIT)
    await expect(panel.get_by_role("status")).to_contain_text("Nothing is pinned here yet")
    r = await client.get(f"/api/v1/channels/{room}/pins", headers=thor.headers)
    assert r.json()["messages"] == []
    await expect(thor_panel.get_by_role("article")).to_have_count(0, timeout=WAIT)

    # Escape closes the panel.
    await panel.get_by_role("button", name="Close pinned messages").press("Escape")
    await expect(panel).to_have_count(0)
    assert errors == []
    await thor_ctx.close()
    await context.close()


async def test_on_a_phone_the_panel_steps_aside_after_a_jump(site, browser, client, accounts):
    from playwright.async_api import expect

    freya, thor, guild, room = await hall(client, accounts)
    first = await post(client, thor, room, "pinned at the start")
    for i in range(20):
        await post(client, freya, room, f"chatter {i}")
    await pin(client, freya, room, first)

    context, page = await open_room(browser, "freya", guild, room, viewport={"width": 360, "height": 740})
    await page.get_by_role("button", name="Pinned messages").click()
    panel = page.get_by_role("region", name="Pinned messages")
    await expect(panel.get_by_role("article")).to_have_count(1, timeout=WAIT)
    box = await panel.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= 360
    assert await serious_axe_violations(page) == []
    await panel.get_by_role("button", name="Jump").click()
    await expect(panel).to_have_count(0)
    await expect(article(page, "pinned at the start")).to_be_in_viewport(timeout=WAIT)
    await context.close()

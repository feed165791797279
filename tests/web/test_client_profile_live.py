"""A display-name change reaches every screen live (docs/client.md, "Data flow"): the member list, message
authors with their letter avatars and reply previews, for the other members (MEMBER_UPDATE) and for the person
who changed it (USER_UPDATE), without a reload (OpenAPI: updateMe)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.browser import ORIGIN, needs_chromium, needs_client, open_page
from tests.support.guilds import make_guild, make_invite
from tests.support.messages import post

pytestmark = [needs_chromium, needs_client]

WAIT = 10000


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the events are covered on both databases by the gateway tests


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"global": "10000/60"}}


async def test_a_new_display_name_shows_everywhere_at_once(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    for who in (freya, thor):
        r = await client.post("/api/v1/users/@me/onboarding/complete", json={"display_name": who["user"]["username"]},
                              headers=who.headers)
        assert r.status_code == 200, r.text
    guild = await make_guild(client, freya, "Long Winter")
    room = guild["system_channel_id"]
    r = await client.post(f"/api/v1/invites/{(await make_invite(client, freya, room))['code']}", headers=thor.headers)
    assert r.status_code == 200, r.text
    asked = await post(client, thor, room, "Who brews the mead tonight?")
    await post(client, freya, room, "I do.", reply_to_id=asked["id"])

    pages = []
    for login in ("freya", "thor"):
        context, page, errors = await open_page(browser, login, f"/channels/{guild['id']}/{room}",
                                                viewport={"width": 1280, "height": 800})
        members = page.get_by_role("complementary", name="Members")
        await expect(members).to_contain_text("thor", timeout=WAIT)
        pages.append((context, page, errors))

    # thor's page is connected (freya's list shows him online, which his identified connection announces), so
    # the change below cannot come before his page listens; the member list alone is fetched over HTTP.
    await expect(pages[0][1].get_by_role("complementary", name="Members")).to_contain_text("Online — 2", timeout=WAIT)
    r = await client.patch("/api/v1/users/@me", json={"display_name": "Ragnar"}, headers=thor.headers)
    assert r.status_code == 200, r.text

    for _context, page, _errors in pages:
        log = page.get_by_role("log", name="Messages")
        members = page.get_by_role("complementary", name="Members")
        await expect(members).to_contain_text("Ragnar", timeout=WAIT)
        await expect(members.get_by_role("listitem").filter(has_text="Ragnar").locator(".avatar")).to_have_text("R")
        asked_article = log.get_by_role("article").filter(has_text="Who brews the mead tonight?").filter(
            has_not_text="I do.")
        await expect(asked_article).to_contain_text("Ragnar")
        await expect(asked_article.locator(".avatar")).to_have_text("R")
        reply = log.get_by_role("article").filter(has_text="I do.")
        await expect(reply.locator(".ref")).to_contain_text("Replying to Ragnar")
        await expect(log).not_to_contain_text("thor")
    for context, _page, errors in pages:
        assert errors == []
        await context.close()

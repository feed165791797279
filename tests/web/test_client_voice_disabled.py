"""Voice when the instance has no media server (docs/client.md, "Voice when the instance has no media
server"; getMeta `features.voice_enabled` false): voice rooms say "Voice is not set up on this server" under
them and opening one shows its text without trying to join (no error left on screen); a conversation's
`Start call` is marked unavailable with that description and, pressed, says why in a note that Escape
closes; an instance administrator's note also names the variables that turn voice on. No serious
accessibility violation."""

from __future__ import annotations

import re
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
    watch_errors,
)
from tests.support.calls import conversation
from tests.support.guilds import make_guild, make_invite
from tests.support.http import Api
from tests.support.voice import voice_room

pytestmark = [needs_chromium, needs_client]

WAIT = 10000
OFF = "Voice is not set up on this server"


@pytest.fixture
def backend() -> str:
    return "sqlite"  # voice.disabled answers are covered on both databases by tests/voice


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    # No MEDIA_API_KEY / MEDIA_API_SECRET: the instance has no voice.
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"global": "10000/60", "auth.login": "1000/60"}}


async def test_voice_rooms_and_calls_say_voice_is_not_set_up(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya, "Long Winter")
    lounge = await voice_room(client, freya, guild["id"], "Lounge")
    invite = await make_invite(client, freya, guild["system_channel_id"])
    r = await client.post(f"/api/v1/invites/{invite['code']}", headers=thor.headers)
    assert r.status_code == 200, r.text
    dm = await conversation(Api(client), thor, freya)

    context, page, errors = await open_page(browser, "thor", f"/channels/{guild['id']}/{guild['system_channel_id']}")
    rooms = page.get_by_role("navigation", name="Rooms")
    entry = rooms.get_by_role("listitem").filter(has=page.get_by_role("link", name="Lounge"))
    await expect(entry).to_contain_text(OFF, timeout=WAIT)
    await expect(rooms.get_by_role("link", name="Lounge")).to_have_accessible_description(OFF)
    # Not an administrator: nothing to configure is offered.
    await expect(entry.get_by_role("button", name="How to set it up")).to_have_count(0)
    await rooms.get_by_role("link", name="Lounge").click()
    await page.wait_for_url(f"{ORIGIN}/channels/{guild['id']}/{lounge}", timeout=WAIT)
    await expect(page.get_by_role("log", name="Messages")).to_be_visible()
    # No join was tried, so there is no voice panel and no error that stays.
    await expect(page.get_by_role("button", name="Leave voice")).to_have_count(0)
    await expect(page.get_by_role("alert")).to_have_count(0)
    r = await client.get(f"/api/v1/guilds/{guild['id']}/voice-states", headers=freya.headers)
    assert r.status_code == 403 and r.json()["error"]["code"] == "voice.disabled", r.text

    await page.goto(f"{ORIGIN}/channels/@me/{dm}")
    call = page.get_by_role("button", name="Start call")
    await expect(call).to_have_attribute("aria-disabled", "true", timeout=WAIT)
    await expect(call).to_have_accessible_description(OFF)
    # Marked unavailable (aria-disabled), yet reachable by keyboard: pressing it says why.
    await call.focus()
    await page.keyboard.press("Enter")
    note = page.get_by_role("note", name="Voice is not set up")
    await expect(note).to_be_visible()
    await expect(note).to_contain_text("the administrator of this instance has not set up")
    await expect(note).not_to_contain_text("MEDIA_API_KEY")
    assert await serious_axe_violations(page) == []
    await page.keyboard.press("Escape")
    await expect(note).to_be_hidden()
    await expect(page.get_by_role("alert")).to_have_count(0)
    assert not re.search(r"/call\b", " ".join(errors)), errors
    assert errors == []
    await context.close()


async def test_an_administrator_reads_which_variables_turn_voice_on(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    odin = await admin_account(client, accounts, rt, "odin")
    guild = await make_guild(client, odin, "Long Winter")
    await voice_room(client, odin, guild["id"], "Lounge")

    context = await admin_context(browser, rt, odin, viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    errors = watch_errors(page)
    await page.goto(f"{ORIGIN}/channels/{guild['id']}/{guild['system_channel_id']}")
    entry = page.get_by_role("navigation", name="Rooms").get_by_role("listitem").filter(
        has=page.get_by_role("link", name="Lounge"))
    await expect(entry).to_contain_text(OFF, timeout=WAIT)
    await expect(page.get_by_role("link", name="Lounge")).to_have_accessible_description(OFF)
    await entry.get_by_role("button", name="How to set it up").click()
    note = page.get_by_role("note", name="Voice is not set up")
    await expect(note).to_be_visible()
    for variable in ("MEDIA_API_KEY", "MEDIA_API_SECRET", "MEDIA_API_URL", "MEDIA_PUBLIC_URL"):
        await expect(note).to_contain_text(variable)
    await expect(note).to_contain_text("docs/voice.md")
    assert await serious_axe_violations(page) == []
    # A click elsewhere puts it away: nothing stays on screen.
    await page.get_by_role("log", name="Messages").click()
    await expect(note).to_be_hidden()
    assert errors == []
    await context.close()

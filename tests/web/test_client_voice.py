"""Voice rooms and calls in a real headless Chromium (docs/voice.md, "For client authors"; docs/social.md,
"Calls"): joining a voice room lists the person for another member live and leaving removes them; the media
server is out of reach here, so the panel says so in words while the listing still comes from the service; after
a reload the page offers to reconnect or leave; a
moderator's server mute reaches the muted person's panel and locks the microphone off; a soundboard press
reaches the other participant's client; on a phone the voice controls sit under the room's header, outside
the drawer; a call rings, is accepted and left; axe-core finds no serious violation on the voice panel, the
soundboard and the call banner."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.browser import (
    ORIGIN,
    needs_chromium,
    needs_client,
    open_page,
    serious_axe_violations,
)
from tests.support.customisation import upload_sound
from tests.support.factories import add_member
from tests.support.guilds import make_guild
from tests.support.livekit_standin import closed_port_url
from tests.support.voice import voice_room, voice_settings

pytestmark = [needs_chromium, needs_client]

WAIT = 10000
# livekit-client tries the signalling socket, then the validation address, before it gives up.
MEDIA_WAIT = 30000
FAILED = "Media server unreachable — you are listed but cannot hear anyone"


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    # The media server's API is a closed port: the service must not fail because of it.
    return {**voice_settings(closed_port_url()), "PUBLIC_URL": ORIGIN,
            "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60", "voice": "1000/60",
                            "calls": "1000/60", "uploads": "1000/60"}}


def unexpected(errors: list[str]) -> list[str]:
    """Console errors other than the media server's refusals (there is none here: the service's /rtc answers
    404 and livekit-client logs its attempts)."""
    return [e for e in errors if "404" not in e and "rtc" not in e.lower() and "livekit" not in e.lower()
            and "websocket" not in e.lower() and "signal" not in e.lower() and "could not" not in e.lower()]


def rooms(page: Any) -> Any:
    return page.get_by_role("navigation", name="Rooms")


def listed(page: Any, room: str, name: str) -> Any:
    return rooms(page).get_by_role("list", name=f"In {room}").get_by_role("listitem").filter(has_text=name)


def panel(page: Any) -> Any:
    return page.get_by_role("region", name="Voice")


async def hall(client: Any, accounts: Any, rt: Any) -> tuple[Any, Any, dict[str, Any], str]:
    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya, "Longhouse")
    await add_member(rt, guild["id"], thor)
    lounge = await voice_room(client, freya, guild["id"], "Lounge")
    return freya, thor, guild, lounge


async def join_lounge(page: Any) -> None:
    from playwright.async_api import expect

    await rooms(page).get_by_role("link", name="Lounge", exact=True).click()
    await expect(panel(page)).to_be_visible(timeout=WAIT)


async def test_joining_a_voice_room_lists_you_for_another_member_live(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    _freya, _thor, guild, _lounge = await hall(client, accounts, rt)
    general = guild["system_channel_id"]
    f_ctx, freya_page, _ = await open_page(browser, "freya", f"/channels/{guild['id']}/{general}")
    t_ctx, thor_page, thor_errors = await open_page(browser, "thor", f"/channels/{guild['id']}/{general}")
    await expect(rooms(freya_page).get_by_role("link", name="Lounge", exact=True)).to_be_visible(timeout=WAIT)
    await expect(rooms(freya_page).get_by_role("list", name="In Lounge")).to_have_count(0)

    await join_lounge(thor_page)
    # The other member sees thor under the room, live.
    await expect(listed(freya_page, "Lounge", "thor")).to_be_visible(timeout=WAIT)
    await expect(listed(thor_page, "Lounge", "thor")).to_be_visible(timeout=WAIT)
    # No real media server: the panel says so in words; the toggles are there, the microphone on.
    voice = panel(thor_page)
    await expect(voice.get_by_role("link", name="Lounge")).to_be_visible()
    await expect(voice.get_by_role("status").filter(has_text=FAILED)).to_be_visible(timeout=MEDIA_WAIT)
    await expect(voice.get_by_role("button", name="Microphone")).to_have_attribute("aria-pressed", "true")
    await expect(voice.get_by_role("button", name="Sound", exact=True)).to_have_attribute("aria-pressed", "true")
    assert await serious_axe_violations(thor_page) == []

    # Muting oneself reaches the other member's list.
    await voice.get_by_role("button", name="Microphone").click()
    await expect(voice.get_by_role("button", name="Microphone")).to_have_attribute("aria-pressed", "false")
    await expect(listed(freya_page, "Lounge", "thor")).to_contain_text("muted", timeout=WAIT)

    # After a reload the page is not connected, but thor is still listed: it says so and offers both ways.
    await thor_page.reload()
    voice = panel(thor_page)
    await expect(voice.get_by_role("status")).to_have_text("You are listed in Lounge but not connected on this page.",
                                                          timeout=WAIT)
    await voice.get_by_role("button", name="Reconnect").click()
    await expect(voice.get_by_role("status").filter(has_text=FAILED)).to_be_visible(timeout=MEDIA_WAIT)

    await voice.get_by_role("button", name="Leave voice").click()
    await expect(panel(thor_page)).to_have_count(0, timeout=WAIT)
    await expect(listed(freya_page, "Lounge", "thor")).to_have_count(0, timeout=WAIT)
    await expect(listed(thor_page, "Lounge", "thor")).to_have_count(0, timeout=WAIT)
    assert unexpected(thor_errors) == []
    await f_ctx.close()
    await t_ctx.close()


async def test_a_moderator_mutes_you_and_your_client_shows_it(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    _freya, _thor, guild, _lounge = await hall(client, accounts, rt)
    general = guild["system_channel_id"]
    f_ctx, freya_page, _ = await open_page(browser, "freya", f"/channels/{guild['id']}/{general}")
    t_ctx, thor_page, _ = await open_page(browser, "thor", f"/channels/{guild['id']}/{general}")
    await join_lounge(thor_page)
    await expect(listed(freya_page, "Lounge", "thor")).to_be_visible(timeout=WAIT)
    # thor, a plain member, has no moderation menu on anyone.
    await expect(thor_page.get_by_role("button", name="Voice actions for thor")).to_have_count(0)

    # The owner mutes thor from the menu on his name.
    await freya_page.get_by_role("button", name="Voice actions for thor").click()
    menu = freya_page.get_by_role("menu", name="Voice actions for thor")
    await expect(menu).to_be_visible()
    await expect(menu.get_by_role("menuitemcheckbox", name="Server deafen thor")).to_be_visible()
    await expect(menu.get_by_role("menuitem", name="Disconnect thor")).to_be_visible()
    assert await serious_axe_violations(freya_page) == []
    await menu.get_by_role("menuitemcheckbox", name="Server mute thor").click()

    voice = panel(thor_page)
    await expect(voice).to_contain_text("Muted by a moderator", timeout=WAIT)
    microphone = voice.get_by_role("button", name="Microphone")
    await expect(microphone).to_have_attribute("aria-pressed", "false")
    await expect(microphone).to_be_disabled()
    await expect(listed(freya_page, "Lounge", "thor")).to_contain_text("muted by a moderator", timeout=WAIT)

    # The menu shows the mute as checked; lifting it gives the microphone back.
    await freya_page.get_by_role("button", name="Voice actions for thor").click()
    item = freya_page.get_by_role("menuitemcheckbox", name="Server mute thor")
    await expect(item).to_have_attribute("aria-checked", "true")
    await item.click()
    await expect(voice).not_to_contain_text("Muted by a moderator", timeout=WAIT)
    await expect(microphone).to_be_enabled()

    # Disconnecting takes thor out of voice: his panel goes, the list loses him.
    await freya_page.get_by_role("button", name="Voice actions for thor").click()
    await freya_page.get_by_role("menuitem", name="Disconnect thor").click()
    await expect(listed(freya_page, "Lounge", "thor")).to_have_count(0, timeout=WAIT)
    await expect(thor_page.get_by_role("region", name="Voice").get_by_role("status")
                 .filter(has_text="You were disconnected from the voice room.")).to_be_visible(timeout=WAIT)
    await f_ctx.close()
    await t_ctx.close()


async def test_on_a_phone_the_voice_controls_stay_on_screen_outside_the_drawer(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    _freya, _thor, guild, _lounge = await hall(client, accounts, rt)
    general = guild["system_channel_id"]
    t_ctx, page, _ = await open_page(browser, "thor", f"/channels/{guild['id']}/{general}",
                                     viewport={"width": 360, "height": 740})
    drawer = page.locator("#navigation")
    await expect(page.get_by_role("heading", name="general", exact=True)).to_be_visible(timeout=WAIT)
    await page.get_by_role("button", name="Open navigation").click()
    await expect(rooms(page).get_by_role("link", name="Lounge", exact=True)).to_be_visible(timeout=WAIT)
    await rooms(page).get_by_role("link", name="Lounge", exact=True).click()
    # Opening the room closed the drawer; the panel is under the room's header, in reach without it.
    await expect(rooms(page)).to_be_hidden(timeout=WAIT)
    voice = panel(page)
    await expect(voice).to_be_visible(timeout=WAIT)
    await expect(drawer.get_by_role("region", name="Voice")).to_have_count(0)
    await expect(voice.get_by_role("button", name="Microphone")).to_have_attribute("aria-pressed", "true")
    await voice.get_by_role("button", name="Microphone").click()
    await expect(voice.get_by_role("button", name="Microphone")).to_have_attribute("aria-pressed", "false")
    box = await voice.bounding_box()
    assert box is not None and box["width"] <= 360 and box["y"] < 200, box  # under the header, not below the fold
    assert await serious_axe_violations(page) == []
    # With the drawer open there is still one panel, the one in the room.
    await page.get_by_role("button", name="Open navigation").click()
    await expect(rooms(page)).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("region", name="Voice")).to_have_count(1)
    await page.keyboard.press("Escape")  # closes the drawer
    await expect(rooms(page)).to_be_hidden(timeout=WAIT)
    await voice.get_by_role("button", name="Leave voice").click()
    await expect(panel(page)).to_have_count(0, timeout=WAIT)
    await t_ctx.close()


async def test_a_soundboard_press_reaches_the_other_participant(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya, _thor, guild, _lounge = await hall(client, accounts, rt)
    sound = await upload_sound(client, freya, guild["id"], "Horn")
    general = guild["system_channel_id"]
    f_ctx, freya_page, _ = await open_page(browser, "freya", f"/channels/{guild['id']}/{general}")
    t_ctx, thor_page, _ = await open_page(browser, "thor", f"/channels/{guild['id']}/{general}")
    await join_lounge(freya_page)
    await join_lounge(thor_page)
    await expect(listed(freya_page, "Lounge", "thor")).to_be_visible(timeout=WAIT)

    await panel(thor_page).get_by_role("button", name="Soundboard").click()
    board = thor_page.get_by_role("region", name="Soundboard")
    await expect(board.get_by_role("button", name="Play Horn")).to_be_visible(timeout=WAIT)
    assert await serious_axe_violations(thor_page) == []
    await board.get_by_role("button", name="Play Horn").click()
    await expect(board.get_by_role("status")).to_have_text("You played Horn.", timeout=WAIT)

    # freya's client heard SOUNDBOARD_PLAY: it says who played what and played the file.
    await expect(panel(freya_page).get_by_role("status").filter(has_text="thor played Horn")).to_be_visible(timeout=WAIT)
    file_id = (sound.get("sound") or sound)["file_id"]
    await expect(freya_page.locator(f'[data-voice="sounds"] audio[src="/files/{file_id}"]')).to_have_count(1, timeout=WAIT)
    await f_ctx.close()
    await t_ctx.close()


async def test_a_call_rings_is_accepted_and_left(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    r = await client.post("/api/v1/users/@me/relationships", json={"username": "thor"}, headers=freya.headers)
    assert r.status_code in (200, 201), r.text
    r = await client.put(f"/api/v1/users/@me/relationships/{freya.id}", json={"type": "friend"}, headers=thor.headers)
    assert r.status_code in (200, 201), r.text
    r = await client.post("/api/v1/users/@me/channels", json={"recipient_id": thor.id}, headers=freya.headers)
    assert r.status_code in (200, 201), r.text
    dm = r.json()["channel"]["id"]

    f_ctx, freya_page, _ = await open_page(browser, "freya", f"/channels/@me/{dm}")
    t_ctx, thor_page, _ = await open_page(browser, "thor", f"/channels/@me/{dm}")
    await freya_page.get_by_role("button", name="Start call").click()

    # thor's conversation rings: accept or decline.
    call = thor_page.get_by_role("region", name="Call")
    await expect(call.get_by_role("button", name="Accept call")).to_be_visible(timeout=WAIT)
    await expect(call.get_by_role("button", name="Decline call")).to_be_visible()
    await expect(call).to_contain_text("freya is calling you")
    assert await serious_axe_violations(thor_page) == []
    await call.get_by_role("button", name="Accept call").click()

    # Both see the call with both in it, and their controls.
    for page in (freya_page, thor_page):
        view = page.get_by_role("region", name="Call")
        await expect(view.get_by_role("button", name="Leave call")).to_be_visible(timeout=WAIT)
        await expect(view.get_by_role("button", name="Microphone")).to_be_visible()
        await expect(view.get_by_role("list", name="In the call").get_by_role("listitem")).to_have_count(2)
        await expect(view.get_by_role("status")).to_contain_text("2 in the call", timeout=WAIT)
    await expect(thor_page.get_by_role("button", name="Accept call")).to_have_count(0)
    assert await serious_axe_violations(freya_page) == []

    # freya leaves: the call ends for both.
    await freya_page.get_by_role("region", name="Call").get_by_role("button", name="Leave call").click()
    await expect(freya_page.get_by_role("region", name="Call")).to_have_count(0, timeout=WAIT)
    await expect(thor_page.get_by_role("region", name="Call")).to_have_count(0, timeout=WAIT)
    await expect(freya_page.get_by_role("button", name="Start call")).to_be_visible()
    await f_ctx.close()
    await t_ctx.close()

"""Home in a real headless Chromium (docs/client.md, "Home"): friends added by username and accepted live,
every refusal of the add-friend form in words, presence changing live, a 1:1 opened from the friend list
with messages both ways, a group created from the dialog, renamed and trimmed by its owner with the
others following live, a block that refuses sending in words, and no serious accessibility violation."""

from __future__ import annotations

import base64
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

pytestmark = [needs_chromium, needs_client]

WAIT = 10000
# A 1x1 PNG for the group icon.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60",
                                                  "relationships": "1000/60", "dm.open": "1000/60"}}


async def befriend(client: Any, a: Any, b: Any) -> None:
    r = await client.post("/api/v1/users/@me/relationships", json={"username": b["user"]["username"]}, headers=a.headers)
    assert r.status_code == 201, r.text
    r = await client.put(f"/api/v1/users/@me/relationships/{a.id}", json={"type": "friend"}, headers=b.headers)
    assert r.status_code == 200, r.text


def tab(page: Any, name: str) -> Any:
    return page.get_by_role("tablist", name="Friends").get_by_role("tab", name=name)


def person(page: Any, name: str) -> Any:
    return page.get_by_role("tabpanel").get_by_role("listitem", name=name, exact=True)


def conversations(page: Any) -> Any:
    return page.get_by_role("navigation", name="Direct messages")


def article(page: Any, text: str) -> Any:
    return page.get_by_role("log", name="Messages").get_by_role("article").filter(has_text=text)


async def test_friends_added_accepted_and_chatting_live(site, browser, client, accounts):
    from playwright.async_api import expect

    await accounts.register("freya")
    thor_acc = await accounts.register("thor")
    freya_ctx, freya, freya_errors = await open_page(browser, "freya", "/channels/@me")
    thor_ctx, thor, thor_errors = await open_page(browser, "thor", "/channels/@me")

    # Freya asks by username; every refusal of the form is in words.
    await tab(freya, "Add friend").click()
    box = freya.get_by_role("textbox", name="Username")
    send = freya.get_by_role("button", name="Send friend request")
    for typed, words in (("nobody", "Nobody here is called “nobody”"), ("freya", "your own username")):
        await box.fill(typed)
        await send.click()
        await expect(freya.get_by_role("alert")).to_contain_text(words, timeout=WAIT)
    await box.fill("Thor")
    await send.click()
    await expect(freya.get_by_role("status").filter(has_text="Friend request sent to thor")).to_be_visible(timeout=WAIT)
    await box.fill("thor")
    await send.click()
    await expect(freya.get_by_role("alert")).to_contain_text("already friends with “thor”, or a friend request", timeout=WAIT)

    # Thor sees the request arrive without reload and accepts it; Freya sees the friendship live.
    await expect(thor.get_by_role("tab", name="Pending")).to_contain_text("1", timeout=WAIT)
    await tab(thor, "Pending").click()
    request = person(thor, "freya")
    await expect(request).to_contain_text("Incoming friend request")
    await request.get_by_role("button", name="Accept freya").click()
    await tab(thor, "All").click()
    await expect(person(thor, "freya")).to_be_visible(timeout=WAIT)
    await tab(freya, "All").click()
    await expect(person(freya, "thor")).to_be_visible(timeout=WAIT)

    # Presence: thor's status changes, Freya's list follows (PRESENCE_UPDATE).
    r = await client.patch("/api/v1/users/@me", json={"status": "dnd"}, headers=thor_acc.headers)
    assert r.status_code == 200, r.text
    await expect(person(freya, "thor")).to_contain_text("Do not disturb", timeout=WAIT)

    # A friend's row opens the 1:1; the composer is named after the counterpart.
    await person(freya, "thor").get_by_role("button", name="Message thor").click()
    composer = freya.get_by_role("textbox", name="Message @thor")
    await expect(composer).to_be_visible(timeout=WAIT)
    assert "/channels/@me/" in freya.url
    await composer.fill("Skål, brother")
    await composer.press("Enter")
    await expect(article(freya, "Skål, brother")).to_be_visible(timeout=WAIT)

    # Thor's conversation list gains it live, marked unread; he answers and Freya sees it without reload.
    link = conversations(thor).get_by_role("link", name="freya")
    await expect(link).to_be_visible(timeout=WAIT)
    await expect(link).to_have_accessible_description("Unread", timeout=WAIT)
    await link.click()
    await expect(article(thor, "Skål, brother")).to_be_visible(timeout=WAIT)
    answer = thor.get_by_role("textbox", name="Message @freya")
    await answer.fill("Skål! The mead is ready")
    await answer.press("Enter")
    await expect(article(freya, "Skål! The mead is ready")).to_contain_text("thor", timeout=WAIT)

    for errors in (freya_errors, thor_errors):
        assert only_expected(errors) == []
    await freya_ctx.close()
    await thor_ctx.close()


async def test_a_group_created_renamed_and_trimmed_live(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    sif = await accounts.register("sif")
    bjorn = await accounts.register("bjorn")
    for friend in (thor, sif, bjorn):
        await befriend(client, freya, friend)
    freya_ctx, page, freya_errors = await open_page(browser, "freya", "/channels/@me")
    thor_ctx, thor_page, thor_errors = await open_page(browser, "thor", "/channels/@me")
    sif_ctx, sif_page, _ = await open_page(browser, "sif", "/channels/@me")
    await expect(conversations(thor_page)).to_be_visible(timeout=WAIT)

    # The dialog asks for 2 to 9 friends; the name is optional.
    await conversations(page).get_by_role("button", name="Create a group").click()
    dialog = page.get_by_role("dialog", name="Create a group")
    create = dialog.get_by_role("button", name="Create group")
    await dialog.get_by_role("checkbox", name="thor").check()
    await expect(create).to_be_disabled()
    await dialog.get_by_role("checkbox", name="sif").check()
    await dialog.get_by_role("textbox", name="Group name (optional)").fill("Shield wall")
    await create.click()
    await expect(page.get_by_role("textbox", name="Message @Shield wall")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("complementary", name="Members")).to_contain_text("sif", timeout=WAIT)

    # The others see it live.
    await expect(conversations(thor_page).get_by_role("link", name="Shield wall")).to_be_visible(timeout=WAIT)
    await expect(conversations(sif_page).get_by_role("link", name="Shield wall")).to_be_visible(timeout=WAIT)

    # The owner renames it and sets an icon; thor's list and header follow.
    await conversations(thor_page).get_by_role("link", name="Shield wall").click()
    await page.get_by_role("button", name="Group settings").click()
    settings = page.get_by_role("dialog", name="Group settings")
    await settings.get_by_role("textbox", name="Group name").fill("Longship crew")
    await settings.get_by_role("button", name="Save").click()
    await expect(settings.get_by_role("status")).to_contain_text("renamed", timeout=WAIT)
    await settings.locator("input[type=file]").set_input_files(
        files=[{"name": "icon.png", "mimeType": "image/png", "buffer": PNG}])
    await expect(settings.get_by_role("button", name="Remove icon")).to_be_visible(timeout=WAIT)
    await page.keyboard.press("Escape")
    await expect(conversations(thor_page).get_by_role("link", name="Longship crew")).to_be_visible(timeout=WAIT)
    await expect(thor_page.get_by_role("heading", level=1, name="Longship crew")).to_be_visible(timeout=WAIT)
    await expect(thor_page.locator("nav[aria-label='Direct messages'] img")).to_have_count(1, timeout=WAIT)

    # A participant who is not the owner is told so in the settings.
    await thor_page.get_by_role("button", name="Group settings").click()
    await expect(thor_page.get_by_role("dialog", name="Group settings")).to_contain_text("Only freya, who owns the group")
    await thor_page.keyboard.press("Escape")

    # Any participant adds people; the others see the count grow.
    await page.get_by_role("button", name="Add people").click()
    adding = page.get_by_role("dialog", name="Add people to Longship crew")
    await expect(adding.get_by_role("checkbox")).to_have_count(1)  # thor and sif are in already
    await adding.get_by_role("checkbox", name="bjorn").check()
    await adding.get_by_role("button", name="Add to group").click()
    await expect(thor_page.get_by_text("4 members").first).to_be_visible(timeout=WAIT)

    # The owner removes sif: her list loses it live; thor's header counts three members.
    members = page.get_by_role("complementary", name="Members")
    await members.get_by_role("listitem").filter(has_text="sif").hover()
    await members.get_by_role("button", name="Remove sif from the group").click()
    await expect(conversations(sif_page).get_by_role("link", name="Longship crew")).to_have_count(0, timeout=WAIT)
    await expect(thor_page.get_by_text("3 members").first).to_be_visible(timeout=WAIT)

    # Thor leaves; with two left the group is a 1:1 of freya and bjorn, and thor lands on home.
    await thor_page.get_by_role("button", name="Group settings").click()
    await thor_page.get_by_role("dialog", name="Group settings").get_by_role("button", name="Leave group").click()
    await thor_page.get_by_role("dialog", name="Group settings").get_by_role("button", name="Leave group").click()
    await expect(thor_page.get_by_role("tablist", name="Friends")).to_be_visible(timeout=WAIT)
    await expect(conversations(thor_page).get_by_role("link", name="Longship crew")).to_have_count(0, timeout=WAIT)
    await expect(page.get_by_role("textbox", name="Message @bjorn")).to_be_visible(timeout=WAIT)
    await expect(conversations(page).get_by_role("link", name="bjorn")).to_be_visible()
    assert sif.id and thor.id

    for errors in (freya_errors, thor_errors):
        assert only_expected(errors) == []
    for ctx in (freya_ctx, thor_ctx, sif_ctx):
        await ctx.close()


async def test_a_block_refuses_in_words(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    await befriend(client, freya, thor)
    r = await client.post("/api/v1/users/@me/channels", json={"recipient_id": thor.id}, headers=freya.headers)
    conv = r.json()["channel"]["id"]
    await client.post(f"/api/v1/channels/{conv}/messages", json={"content": "before the feud"}, headers=thor.headers)

    freya_ctx, page, _ = await open_page(browser, "freya", "/channels/@me")
    thor_ctx, thor_page, _ = await open_page(browser, "thor", f"/channels/@me/{conv}")
    await expect(article(thor_page, "before the feud")).to_be_visible(timeout=WAIT)

    # Freya blocks thor from the friend list (after a confirmation); he moves to the Blocked tab.
    await tab(page, "All").click()
    await person(page, "thor").get_by_role("button", name="Block thor").click()
    await page.get_by_role("dialog", name="Block thor?").get_by_role("button", name="Block").click()
    await expect(person(page, "thor")).to_have_count(0, timeout=WAIT)
    await tab(page, "Blocked").click()
    await expect(person(page, "thor")).to_contain_text("Blocked", timeout=WAIT)

    # Thor's message is refused, in words, and what he typed stays to retry.
    box = thor_page.get_by_role("textbox", name="Message @freya")
    await box.fill("why the silence?")
    await box.press("Enter")
    await expect(thor_page.get_by_text(re.compile(r"Not sent: A block exists between"))).to_be_visible(timeout=WAIT)
    await expect(thor_page.get_by_text("why the silence?")).to_be_visible()

    # Freya's 1:1 says that sending is refused while the block stands; asking thor again is refused too.
    await conversations(page).get_by_role("link", name="thor").click()
    await expect(page.get_by_role("note")).to_contain_text("You have blocked thor", timeout=WAIT)
    await page.get_by_role("link", name="Friends").click()
    await tab(page, "Add friend").click()
    await page.get_by_role("textbox", name="Username").fill("thor")
    await page.get_by_role("button", name="Send friend request").click()
    await expect(page.get_by_role("alert")).to_contain_text("one of you has blocked the other", timeout=WAIT)

    # Unblocking from the Blocked tab clears it.
    await tab(page, "Blocked").click()
    await person(page, "thor").get_by_role("button", name="Unblock thor").click()
    await expect(person(page, "thor")).to_have_count(0, timeout=WAIT)
    for ctx in (freya_ctx, thor_ctx):
        await ctx.close()


async def test_no_serious_accessibility_violation_on_home(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    sif = await accounts.register("sif")
    await befriend(client, freya, thor)
    r = await client.post("/api/v1/users/@me/relationships", json={"username": "freya"}, headers=sif.headers)
    assert r.status_code == 201, r.text
    await client.post("/api/v1/users/@me/channels", json={"recipient_id": thor.id}, headers=freya.headers)

    for scheme in ("dark", "light"):
        context, page, _ = await open_page(browser, "freya", "/channels/@me", color_scheme=scheme)
        await tab(page, "All").click()
        await expect(person(page, "thor")).to_be_visible(timeout=WAIT)
        await expect(conversations(page).get_by_role("link", name="thor")).to_be_visible()
        assert await serious_axe_violations(page) == [], scheme
        await tab(page, "Pending").click()
        await expect(person(page, "sif")).to_be_visible(timeout=WAIT)
        assert await serious_axe_violations(page) == [], scheme
        await tab(page, "Add friend").click()
        assert await serious_axe_violations(page) == [], scheme
        await conversations(page).get_by_role("button", name="Create a group").click()
        await expect(page.get_by_role("dialog", name="Create a group")).to_be_visible()
        assert await serious_axe_violations(page) == [], scheme
        await context.close()

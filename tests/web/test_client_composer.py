"""The composer and the room's tools in a real headless Chromium (docs/client.md, "Composer" and "Search"):
`@` completion inserts a mention that renders as one (with `#` rooms, `:` emojis and `/` commands beside it),
an image uploads with visible progress and shows inline for the other person, a file too large is refused
in words, search finds a message and scrolls the room to it, and no serious accessibility violation with
the emoji picker, the completion list or the search panel open."""

from __future__ import annotations

import io
import os
from typing import Any

import pytest
from PIL import Image

from tests.support.browser import needs_chromium, needs_client, serious_axe_violations, watch_errors
from tests.support.chat import SETTINGS, article, hall, open_room

pytestmark = [needs_chromium, needs_client]

WAIT = 10000
MAX_UPLOAD = 1_048_576  # "1 MiB" in the refusal


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {**SETTINGS, "MAX_UPLOAD_SIZE": MAX_UPLOAD}


def noise_png(width: int, height: int) -> bytes:
    """An image that does not compress, so its upload takes a measurable time when throttled."""
    buf = io.BytesIO()
    Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)).save(buf, "PNG")
    return buf.getvalue()


async def test_completion_inserts_a_mention_that_renders(site, browser, client, accounts):
    from playwright.async_api import expect

    freya, thor, guild, room = await hall(client, accounts)
    context, page = await open_room(browser, "freya", guild, room)
    errors = watch_errors(page)
    composer = page.get_by_role("textbox", name="Message #general")
    await expect(page.get_by_role("complementary", name="Members")).to_contain_text("thor", timeout=WAIT)

    # `@`: the members, keyboard to pick; the textbox shows the name.
    await composer.press_sequentially("Skål @th")
    people = page.get_by_role("listbox", name="Members")
    await expect(people.get_by_role("option", name="thor")).to_have_attribute("aria-selected", "true")
    combobox = page.get_by_role("combobox", name="Message #general")
    await expect(combobox).to_have_attribute("aria-expanded", "true")
    await composer.press("Enter")
    await expect(composer).to_have_value("Skål @thor ")
    await expect(people).to_have_count(0)

    # `#` rooms (Tab picks too) and `:` emojis (the list arrives on first use).
    await composer.press_sequentially("and #gen")
    await expect(page.get_by_role("listbox", name="Rooms").get_by_role("option", name="general")).to_be_visible()
    await composer.press("Tab")
    await composer.press_sequentially(":thumbsu")
    emoji = page.get_by_role("listbox", name="Emoji")
    await expect(emoji.get_by_role("option").first).to_contain_text(":thumbsup:", timeout=WAIT)
    await composer.press("Enter")
    await expect(composer).to_have_value("Skål @thor and #general 👍 ")

    await composer.press("Enter")
    sent = article(page, "Skål")
    await expect(sent.locator(".mention").first).to_have_text("@thor", timeout=WAIT)
    await expect(sent.locator(".mention").nth(1)).to_have_text("#general")
    r = await client.get(f"/api/v1/channels/{room}/messages", headers=freya.headers)
    message = r.json()["messages"][0]
    assert message["content"] == f"Skål <@{thor.id}> and <#{room}> 👍"
    assert message["mentions"] == [thor.id]

    # The mentioned person sees it as a mention of them.
    thor_ctx, thor_page = await open_room(browser, "thor", guild, room)
    await expect(article(thor_page, "Skål").locator(".mention").first).to_have_text("@thor", timeout=WAIT)
    await expect(article(thor_page, "Skål")).to_contain_class("mentioned")

    # `/` at the start lists the commands with what they do; Escape closes the list and keeps the text.
    await composer.press_sequentially("/")
    commands = page.get_by_role("listbox", name="Commands")
    await expect(commands.get_by_role("option", name="/me")).to_contain_text("third person")
    await expect(commands.get_by_role("option")).to_have_count(4)
    await composer.press("Escape")
    await expect(commands).to_have_count(0)
    await expect(composer).to_have_value("/")
    await composer.press_sequentially("me raises a horn")
    await composer.press("Enter")
    await expect(article(page, "raises a horn")).to_contain_text("freya raises a horn", timeout=WAIT)

    # The emoji picker inserts at the caret.
    await page.get_by_role("button", name="Emoji", exact=True).click()
    picker = page.get_by_role("dialog", name="Emoji picker")
    await picker.get_by_role("searchbox", name="Search emoji").fill("beer mug")
    await picker.get_by_role("button", name="beer mug", exact=True).click()
    await expect(picker).to_have_count(0)
    await expect(composer).to_have_value("🍺")
    assert errors == []
    await thor_ctx.close()
    await context.close()


async def test_an_image_uploads_with_progress_and_shows_for_the_other_person(site, browser, client, accounts):
    from playwright.async_api import expect

    freya, thor, guild, room = await hall(client, accounts)
    context, page = await open_room(browser, "freya", guild, room)
    errors = watch_errors(page)
    composer = page.get_by_role("textbox", name="Message #general")
    await expect(composer).to_be_visible(timeout=WAIT)

    # Uploads are throttled so that the progress is seen between 0 and 100 %.
    cdp = await context.new_cdp_session(page)
    await cdp.send("Network.enable")
    await cdp.send("Network.emulateNetworkConditions",
                   {"offline": False, "latency": 20, "downloadThroughput": -1, "uploadThroughput": 250_000})
    image = noise_png(400, 300)
    assert 300_000 < len(image) < MAX_UPLOAD
    # Every value the bar takes is recorded in the page itself (a loaded machine may not poll often enough to
    # catch the bar between 0 and 100 % from here).
    await page.evaluate("""() => {
      window.__progress = [];
      const record = (el) => { if (el.getAttribute && el.getAttribute('role') === 'progressbar' || el.tagName === 'PROGRESS')
        window.__progress.push(el.getAttribute('value')); };
      new MutationObserver((changes) => changes.forEach((c) => {
        if (c.type === 'attributes') record(c.target);
        else c.addedNodes.forEach((n) => n.nodeType === 1 && n.querySelectorAll
          && [n, ...n.querySelectorAll('progress,[role=progressbar]')].forEach(record));
      })).observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ['value']});
    }""")
    await page.locator("input[type=file]").set_input_files(
        files=[{"name": "longship.png", "mimeType": "image/png", "buffer": image}])
    bar = page.get_by_role("progressbar", name="Uploading longship.png")
    await expect(bar).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("button", name="Send message")).to_be_disabled()
    tray = page.get_by_role("list", name="Attachments")
    await expect(tray).to_contain_text("ready", timeout=WAIT)
    seen = {float(v) for v in await page.evaluate("() => window.__progress") if v is not None}
    assert any(0 < v < 1 for v in seen), seen
    await expect(tray.get_by_role("img")).to_have_count(0)  # the preview is decorative; the name says it
    await cdp.send("Network.emulateNetworkConditions",
                   {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})

    await composer.fill("Our ship, drawn")
    await composer.press("Enter")
    await expect(tray).to_have_count(0)
    mine = article(page, "Our ship, drawn")
    await expect(mine.get_by_role("img", name="longship.png")).to_be_visible(timeout=WAIT)

    thor_ctx, thor_page = await open_room(browser, "thor", guild, room)
    theirs = article(thor_page, "Our ship, drawn").get_by_role("img", name="longship.png")
    await expect(theirs).to_be_visible(timeout=WAIT)
    await expect(theirs).to_have_js_property("naturalWidth", 400, timeout=WAIT)  # the bytes arrived
    box = await theirs.bounding_box()
    assert box and box["width"] <= 400 and box["height"] <= 300
    await expect(article(thor_page, "Our ship, drawn").get_by_role("link", name="Open longship.png")).to_have_attribute(
        "target", "_blank")

    # Another file shows as a card with its name and size; one over the limit is refused in words.
    await page.locator("input[type=file]").set_input_files(files=[
        {"name": "saga.txt", "mimeType": "text/plain", "buffer": b"In the beginning was the ice."},
        {"name": "hoard.bin", "mimeType": "application/octet-stream", "buffer": b"\0" * (MAX_UPLOAD + 1)},
    ])
    refusal = page.get_by_role("alert").filter(has_text="hoard.bin")
    await expect(refusal).to_have_text("hoard.bin is larger than the 1 MiB this server allows.", timeout=WAIT)
    await page.get_by_role("button", name="Remove hoard.bin").click()
    await expect(page.get_by_role("list", name="Attachments")).to_contain_text("ready", timeout=WAIT)
    await composer.press("Enter")  # a message of only a file
    card = article(thor_page, "saga.txt")
    await expect(card.get_by_role("link", name="Download saga.txt")).to_be_visible(timeout=WAIT)
    await expect(card).to_contain_text("29 bytes")
    r = await client.get(f"/api/v1/channels/{room}/messages", headers=thor.headers)
    newest = r.json()["messages"][0]
    assert newest["content"] == "" and [a["original_name"] for a in newest["attachments"]] == ["saga.txt"]
    assert [e for e in errors if "413" not in e] == []
    await thor_ctx.close()
    await context.close()


async def test_search_finds_a_message_and_the_room_scrolls_to_it(site, browser, client, accounts):
    from playwright.async_api import expect

    freya, thor, guild, room = await hall(client, accounts)
    r = await client.post(f"/api/v1/channels/{room}/messages", json={"content": "the mead is in the cellar"},
                          headers=thor.headers)
    assert r.status_code == 201
    for i in range(80):  # further back than the first page the room loads
        r = await client.post(f"/api/v1/channels/{room}/messages", json={"content": f"chatter {i}"}, headers=freya.headers)
        assert r.status_code == 201, r.text

    context, page = await open_room(browser, "freya", guild, room)
    await expect(article(page, "chatter 79")).to_be_visible(timeout=WAIT)
    await expect(article(page, "the mead is in the cellar")).to_have_count(0)

    # In a server the header's box searches the whole server (docs/search.md).
    box = page.get_by_role("textbox", name="Search", exact=True)
    await box.fill("cell")
    await box.press("Enter")
    panel = page.get_by_role("region", name="Search results")
    hit = panel.get_by_role("article").filter(has_text="the mead is in the cellar")
    await expect(hit).to_contain_text("thor", timeout=WAIT)
    await expect(panel.get_by_role("article")).to_have_count(1)
    await hit.get_by_role("button", name="Jump").click()
    await expect(article(page, "the mead is in the cellar")).to_be_in_viewport(timeout=WAIT)

    await box.fill("dragons")
    await box.press("Enter")
    await expect(panel.get_by_role("status")).to_have_text("No messages match “dragons”.", timeout=WAIT)
    await page.get_by_role("button", name="Close search").click()
    await expect(panel).to_have_count(0)
    await context.close()


async def test_no_serious_accessibility_violation_with_the_tools_open(site, browser, client, accounts):
    from playwright.async_api import expect

    freya, thor, guild, room = await hall(client, accounts)
    await client.post(f"/api/v1/channels/{room}/messages", json={"content": "Skål to the hall"}, headers=thor.headers)
    for scheme in ("dark", "light"):
        context, page = await open_room(browser, "freya", guild, room, color_scheme=scheme)
        composer = page.get_by_role("textbox", name="Message #general")
        await expect(article(page, "Skål to the hall")).to_be_visible(timeout=WAIT)
        await expect(page.get_by_role("complementary", name="Members")).to_contain_text("thor", timeout=WAIT)

        await page.get_by_role("button", name="Emoji", exact=True).click()
        picker = page.get_by_role("dialog", name="Emoji picker")
        await expect(picker.get_by_role("button", name="grinning face", exact=True)).to_be_visible(timeout=WAIT)
        assert await serious_axe_violations(page) == [], (scheme, "emoji picker")
        await page.keyboard.press("Escape")
        await expect(picker).to_have_count(0)
        await expect(page.get_by_role("button", name="Emoji", exact=True)).to_be_focused()

        await composer.press_sequentially("@t")
        await expect(page.get_by_role("listbox", name="Members")).to_be_visible()
        assert await serious_axe_violations(page) == [], (scheme, "completion")
        await composer.fill("")

        hall_msg = article(page, "Skål to the hall")
        await hall_msg.hover()
        await hall_msg.get_by_role("button", name="Add reaction").click()
        reactions = page.get_by_role("dialog", name="Pick a reaction")
        query, name, glyph = ("mug", "beer mug", "🍺") if scheme == "dark" else ("bread", "bread", "🍞")
        await reactions.get_by_role("searchbox", name="Search emoji").fill(query)
        await reactions.get_by_role("button", name=name, exact=True).click()
        await expect(hall_msg.get_by_role("button", name=f"{glyph}, 1 reactions")).to_have_attribute("aria-pressed", "true")

        await page.get_by_role("textbox", name="Search", exact=True).fill("hall")
        await page.get_by_role("textbox", name="Search", exact=True).press("Enter")
        panel = page.get_by_role("region", name="Search results")
        await expect(panel.get_by_role("article")).to_have_count(1, timeout=WAIT)
        assert await serious_axe_violations(page) == [], (scheme, "search")
        await context.close()


async def test_the_composer_counts_refuses_too_long_and_resolves_typed_names(site, browser, client, accounts):
    from playwright.async_api import expect

    freya, thor, guild, room = await hall(client, accounts)
    r = await client.post(f"/api/v1/channels/{room}/messages", json={"content": "before"}, headers=freya.headers)
    context, page = await open_room(browser, "freya", guild, room, permissions=["clipboard-read", "clipboard-write"])
    errors = watch_errors(page)
    composer = page.get_by_role("textbox", name="Message #general")
    await expect(page.get_by_role("complementary", name="Members")).to_contain_text("thor", timeout=WAIT)

    # No counter for a short text; near the limit it counts down; over it, it says how many too many.
    await composer.fill("short")
    await expect(page.get_by_text("left", exact=False)).to_have_count(0)
    await composer.fill("a" * 3900)
    await expect(page.get_by_text("100 left")).to_be_visible()
    # A 5,000-character paste stays whole (the box used to cut it at 4,000) and is refused in words.
    await composer.fill("")
    await composer.focus()
    await page.evaluate("text => navigator.clipboard.writeText(text)", "b" * 5000)
    await page.keyboard.press("Control+V")
    await expect(page.get_by_text("1,000 too many")).to_be_visible()
    await composer.press("Enter")
    await expect(page.get_by_role("alert")).to_have_text(
        "This message is 5,000 characters long; the limit is 4,000. Shorten it by 1,000 characters, or send it as a file.")
    assert len(await composer.input_value()) == 5000
    r = await client.get(f"/api/v1/channels/{room}/messages", headers=freya.headers)
    assert r.json()["messages"][0]["content"] == "before"

    # `@name` typed without the completion becomes a mention when it names one member; longer words stay text.
    await composer.fill("Skål @thor and @Thorin, not @thorsday")
    await expect(page.get_by_role("alert")).to_have_count(0)
    await composer.press("End")
    await composer.press("Enter")
    await expect(article(page, "Skål")).to_be_visible(timeout=WAIT)
    r = await client.get(f"/api/v1/channels/{room}/messages", headers=freya.headers)
    assert r.json()["messages"][0]["content"] == f"Skål <@{thor.id}> and @Thorin, not @thorsday"

    # The owner may mention everyone: the completion offers it; a plain member is not offered it.
    await composer.press_sequentially("@every")
    await expect(page.get_by_role("listbox", name="Members").get_by_role("option", name="everyone")).to_be_visible()
    await composer.fill("")
    thor_ctx, thor_page = await open_room(browser, "thor", guild, room)
    thor_box = thor_page.get_by_role("textbox", name="Message #general")
    await expect(thor_box).to_be_visible(timeout=WAIT)
    await thor_box.press_sequentially("@fr")
    await expect(thor_page.get_by_role("listbox", name="Members").get_by_role("option", name="freya")).to_be_visible(timeout=WAIT)
    await thor_box.fill("")
    await thor_box.press_sequentially("@every")
    await expect(thor_page.get_by_role("listbox", name="Members")).to_have_count(0)

    # Every command says what it does in one line.
    await composer.fill("")
    await composer.press_sequentially("/")
    commands = page.get_by_role("listbox", name="Commands").get_by_role("option")
    await expect(commands).to_have_count(4)
    for name, words in (("/me", "third person"), ("/whisper", "small and quiet"), ("/scream", "big and loud"),
                        ("/ls", "only that person sees")):
        await expect(commands.filter(has_text=name)).to_contain_text(words)
    assert errors == []
    await thor_ctx.close()
    await context.close()


async def test_a_voice_rooms_text_chat_is_not_named_with_a_hash(site, browser, client, accounts):
    from playwright.async_api import expect

    freya, thor, guild, room = await hall(client, accounts)
    r = await client.post(f"/api/v1/guilds/{guild}/channels", json={"name": "Lounge", "type": "voice"}, headers=freya.headers)
    assert r.status_code == 201, r.text
    lounge = r.json()["channel"]["id"]
    context, page = await open_room(browser, "freya", guild, lounge)
    box = page.get_by_role("textbox", name="Message Lounge", exact=True)
    await expect(box).to_be_visible(timeout=WAIT)
    await expect(box).to_have_attribute("placeholder", "Message Lounge")
    await expect(page.get_by_role("textbox", name="Message #Lounge")).to_have_count(0)
    await context.close()

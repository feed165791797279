"""Custom emoji, sounds, the cosmetics gallery and personal styles in a real headless Chromium
(docs/customisation.md, docs/client.md): an emoji uploaded in the server settings is in the other
member's picker at once and shows as an image in a reaction seen live; soundboard and interface sounds
uploaded, listed, renamed and deleted; a frame uploaded to the gallery and given to a role shows around
the avatar of a member with that role in another client; a member wears an available frame and a colour
in their personal style; no serious accessibility violation and nothing wider than a 360 px phone on any
of the four screens, in both themes."""

from __future__ import annotations

import io
from typing import Any

import pytest
from PIL import Image, ImageDraw

from tests.support.browser import (
    ORIGIN,
    needs_chromium,
    needs_client,
    open_page,
    serious_axe_violations,
)
from tests.support.customisation import emoji_png, frame_png, upload_cosmetic, upload_emoji, upload_sound, wav
from tests.support.factories import add_member
from tests.support.guilds import give, make_guild, make_role
from tests.support.http import Api
from tests.support.messages import send

pytestmark = [needs_chromium, needs_client]

WAIT = 10000


def icon_png() -> bytes:
    image = Image.new("RGBA", (32, 32), (0, 0, 0, 0))
    ImageDraw.Draw(image).polygon([(16, 2), (30, 16), (16, 30), (2, 16)], fill=(90, 170, 250, 255))
    buf = io.BytesIO()
    image.save(buf, "PNG")
    return buf.getvalue()


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60", "uploads": "1000/60"}}


def only_expected(errors: list[str]) -> list[str]:
    """Console errors other than the refused requests the scenario provokes on purpose."""
    return [e for e in errors if not any(code in e for code in ("409", "413", "415", "422"))]


def article(page: Any, text: str) -> Any:
    return page.get_by_role("article").filter(has_text=text)


async def test_an_uploaded_emoji_is_used_in_a_reaction_seen_live(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya, "Longhouse")
    general = guild["system_channel_id"]
    await add_member(rt, guild["id"], thor)
    await send(client, freya, general, "Who brings the mead?")

    thor_ctx, thor_page, thor_errors = await open_page(browser, "thor", f"/channels/{guild['id']}/{general}")
    await expect(article(thor_page, "Who brings the mead?")).to_be_visible(timeout=WAIT)
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/emojis")
    await expect(page.get_by_role("heading", name="Emoji", exact=True)).to_be_visible(timeout=WAIT)
    await expect(page.get_by_text("0 of 100 used")).to_be_visible()

    # The name rule is checked before anything is sent.
    await page.get_by_label("Image").set_input_files({"name": "mead.png", "mimeType": "image/png", "buffer": emoji_png()})
    await expect(page.get_by_role("textbox", name="Emoji name")).to_have_value("mead")
    await page.get_by_role("textbox", name="Emoji name").fill("mead hall")
    await page.get_by_role("button", name="Upload emoji").click()
    await expect(page.get_by_role("alert")).to_contain_text("only letters, digits and the underscore")
    assert (await Api(client).get(f"/guilds/{guild['id']}/emojis", freya))["emojis"] == []

    await page.get_by_role("textbox", name="Emoji name").fill("mead")
    await page.get_by_role("button", name="Upload emoji").click()
    await expect(page.get_by_role("status").filter(has_text=":mead: added.")).to_be_visible(timeout=WAIT)
    listed = page.get_by_role("listitem", name=":mead:")
    await expect(listed).to_contain_text("Added by you")
    await expect(page.get_by_text("1 of 100 used")).to_be_visible()
    emojis = (await Api(client).get(f"/guilds/{guild['id']}/emojis", freya))["emojis"]
    assert [e["name"] for e in emojis] == ["mead"]
    mead = emojis[0]
    await expect(listed.locator("img")).to_have_attribute("src", f"/files/{mead['file_id']}")

    # A second one of the same name (another case) is refused by the service, in words.
    await page.get_by_label("Image").set_input_files({"name": "x.png", "mimeType": "image/png", "buffer": emoji_png()})
    await page.get_by_role("textbox", name="Emoji name").fill("MEAD")
    await page.get_by_role("button", name="Upload emoji").click()
    await expect(page.get_by_role("alert")).to_contain_text("already has that name", timeout=WAIT)

    # Thor's client, open all along, has the new emoji in its reaction picker without reloading.
    question = article(thor_page, "Who brings the mead?")
    await question.hover()
    await question.get_by_role("button", name="Add reaction").click()
    picker = thor_page.get_by_role("dialog", name="Pick a reaction")
    await expect(picker.get_by_role("button", name=":mead:")).to_be_visible(timeout=WAIT)
    await thor_page.keyboard.press("Escape")

    # Freya goes to the room and reacts with :mead: from the picker.
    await page.goto(f"{ORIGIN}/channels/{guild['id']}/{general}")
    mine = article(page, "Who brings the mead?")
    await expect(mine).to_be_visible(timeout=WAIT)
    await mine.hover()
    await mine.get_by_role("button", name="Add reaction").click()
    freya_picker = page.get_by_role("dialog", name="Pick a reaction")
    await freya_picker.get_by_role("button", name=":mead:").click()
    await expect(mine.get_by_role("button", name=":mead:, 1 reactions")).to_have_attribute("aria-pressed", "true", timeout=WAIT)

    # Thor sees the reaction arrive live, with the emoji's image and the count 1.
    theirs = article(thor_page, "Who brings the mead?").get_by_role("button", name=":mead:, 1 reactions")
    await expect(theirs).to_have_attribute("aria-pressed", "false", timeout=WAIT)
    await expect(theirs.locator("img")).to_have_attribute("src", f"/files/{mead['file_id']}")
    await expect(theirs).to_contain_text("1")

    for e in (errors, thor_errors):
        assert only_expected(e) == []
    await ctx.close()
    await thor_ctx.close()


async def test_sounds_uploaded_listed_renamed_and_deleted(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    guild = await make_guild(client, freya, "Longhouse")
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/sounds")
    await expect(page.get_by_role("heading", name="Sounds", exact=True)).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("tab", name="Soundboard (0 of 30)")).to_have_attribute("aria-selected", "true")

    # A soundboard sound: a tiny WAV made here.
    await page.get_by_label("Sound file").set_input_files({"name": "horn.wav", "mimeType": "audio/wav", "buffer": wav(0.3)})
    await expect(page.get_by_role("textbox", name="Sound name")).to_have_value("horn")
    await page.get_by_role("textbox", name="Sound name").fill("Horn")
    await page.get_by_role("textbox", name="Emoji (optional)").fill("📯")
    await page.get_by_role("button", name="Upload sound").click()
    await expect(page.get_by_role("status").filter(has_text="Horn added to the soundboard")).to_be_visible(timeout=WAIT)
    horn = page.get_by_role("listitem", name="Horn")
    await expect(horn).to_contain_text("📯")
    await expect(page.get_by_role("tab", name="Soundboard (1 of 30)")).to_be_visible()
    sounds = (await Api(client).get(f"/guilds/{guild['id']}/sounds", freya))["sounds"]
    assert [(s["name"], s["kind"], s["emoji"]) for s in sounds] == [("Horn", "soundboard", "📯")]
    await expect(horn.locator("audio")).to_have_attribute("src", f"/files/{sounds[0]['file_id']}")
    await expect(horn.get_by_label("Preview Horn")).to_have_count(1)

    # An interface sound for a palette event, chosen in words.
    await page.get_by_role("tab", name="Interface sounds (0 of 30)").click()
    await expect(page.get_by_role("heading", name="Add an interface sound")).to_be_visible()
    await page.get_by_label("Sound file").set_input_files({"name": "ding.wav", "mimeType": "audio/wav", "buffer": wav(0.2)})
    await page.get_by_role("textbox", name="Sound name").fill("Ding")
    await page.get_by_role("button", name="Upload sound").click()
    await expect(page.get_by_role("alert")).to_contain_text("Choose the event")
    await page.get_by_role("combobox", name="Plays when").select_option(label="Someone mentions you")
    await page.get_by_role("button", name="Upload sound").click()
    await expect(page.get_by_role("status").filter(has_text="Ding now plays when: someone mentions you")).to_be_visible(timeout=WAIT)
    ding = page.get_by_role("listitem", name="Ding")
    await expect(ding).to_contain_text("Plays when: someone mentions you")
    # The event now has its sound, so it is no longer offered for another.
    option = page.get_by_role("combobox", name="Plays when").locator("option", has_text="Someone mentions you")
    await expect(option).to_be_disabled()
    sounds = (await Api(client).get(f"/guilds/{guild['id']}/sounds", freya, params={"kind": "interface"}))["sounds"]
    assert [(s["name"], s["palette_event"]) for s in sounds] == [("Ding", "mention")]

    # Rename the soundboard sound and change its emoji in place.
    await page.get_by_role("tab", name="Soundboard (1 of 30)").click()
    await horn.get_by_role("button", name="Edit Horn").click()
    await page.get_by_role("textbox", name="New name for Horn").fill("War horn")
    await page.get_by_role("textbox", name="Emoji of Horn").fill("🐂")
    await page.get_by_role("button", name="Save", exact=True).click()
    await expect(page.get_by_role("status").filter(has_text="War horn saved.")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("listitem", name="War horn")).to_contain_text("🐂")
    sounds = (await Api(client).get(f"/guilds/{guild['id']}/sounds", freya, params={"kind": "soundboard"}))["sounds"]
    assert [(s["name"], s["emoji"]) for s in sounds] == [("War horn", "🐂")]

    # Delete the interface sound after the confirmation.
    await page.get_by_role("tab", name="Interface sounds (1 of 30)").click()
    await page.get_by_role("listitem", name="Ding").get_by_role("button", name="Delete Ding").click()
    dialog = page.get_by_role("dialog", name="Delete Ding")
    await expect(dialog).to_contain_text("app's own sound")
    await dialog.get_by_role("button", name="Delete sound").click()
    await expect(page.get_by_role("status").filter(has_text="Ding deleted.")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("listitem", name="Ding")).to_have_count(0)
    await expect(page.get_by_text("No interface sounds")).to_be_visible()
    sounds = (await Api(client).get(f"/guilds/{guild['id']}/sounds", freya))["sounds"]
    assert [s["name"] for s in sounds] == ["War horn"]

    assert only_expected(errors) == []
    await ctx.close()


async def test_a_frame_given_to_a_role_shows_in_another_clients_member_list(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    sif = await accounts.register("sif")
    guild = await make_guild(client, freya, "Longhouse")
    general = guild["system_channel_id"]
    for who in (thor, sif):
        await add_member(rt, guild["id"], who)
    jarl = await make_role(client, freya, guild["id"], "Jarl")
    await give(client, freya, guild["id"], thor, jarl["id"])

    sif_ctx, sif_page, sif_errors = await open_page(browser, "sif", f"/channels/{guild['id']}/{general}")
    members = sif_page.get_by_role("complementary", name="Members")
    thor_row = members.get_by_role("listitem").filter(has_text="thor")
    await expect(thor_row).to_be_visible(timeout=WAIT)
    await expect(thor_row.locator("img.cosmetic-frame")).to_have_count(0)

    # The gallery: a frame uploaded in Cosmetics.
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/cosmetics")
    await expect(page.get_by_role("heading", name="Cosmetics", exact=True)).to_be_visible(timeout=WAIT)
    await page.get_by_role("radio", name="Frame").check()
    await page.get_by_label("Image").set_input_files({"name": "ring.png", "mimeType": "image/png", "buffer": frame_png()})
    await page.get_by_role("textbox", name="Name").fill("Gold ring")
    await page.get_by_role("button", name="Upload frame").click()
    await expect(page.get_by_role("status").filter(has_text="Frame Gold ring added")).to_be_visible(timeout=WAIT)
    card = page.get_by_role("listitem", name="Gold ring")
    await expect(card).to_contain_text("No role shows it")
    cosmetics = (await Api(client).get(f"/guilds/{guild['id']}/cosmetics", freya))["cosmetics"]
    assert [(c["name"], c["kind"]) for c in cosmetics] == [("Gold ring", "frame")]
    ring = cosmetics[0]

    # The role editor gives it to Jarl.
    await page.get_by_role("navigation", name="Server settings").get_by_role("link", name="Roles").click()
    await page.get_by_role("list", name="Roles, highest first").get_by_role("button", name="Jarl", exact=True).click()
    await page.get_by_role("combobox", name="Role frame").select_option(label="Gold ring")
    await page.get_by_role("button", name="Save changes").click()
    await expect(page.get_by_role("status").filter(has_text="Changes saved.")).to_be_visible(timeout=WAIT)
    role = (await Api(client).get(f"/guilds/{guild['id']}/roles/{jarl['id']}", freya))["role"]
    assert role["frame_id"] == ring["id"] and role["icon_id"] is None

    # Sif's client shows the frame around thor's avatar, live; not around her own.
    frame = thor_row.locator("img.cosmetic-frame")
    await expect(frame).to_have_attribute("src", f"/files/{ring['file_id']}", timeout=WAIT)
    sif_row = members.get_by_role("listitem").filter(has_text="sif")
    await expect(sif_row.locator("img.cosmetic-frame")).to_have_count(0)

    # Deleting the frame says which role loses it (cancelled here).
    await page.get_by_role("navigation", name="Server settings").get_by_role("link", name="Cosmetics").click()
    await expect(card).to_contain_text("Shown by Jarl")
    await card.get_by_role("button", name="Delete Gold ring").click()
    dialog = page.get_by_role("dialog", name="Delete Gold ring")
    await expect(dialog).to_contain_text("This role shows it and loses it: Jarl")
    await dialog.get_by_role("button", name="Cancel").click()
    await expect(dialog).to_be_hidden()

    for e in (errors, sif_errors):
        assert only_expected(e) == []
    await ctx.close()
    await sif_ctx.close()


async def test_a_member_wears_an_available_frame_and_a_colour(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya, "Longhouse")
    await add_member(rt, guild["id"], thor)
    ring = await upload_cosmetic(client, freya, guild["id"], "Gold ring", "frame", data=frame_png())
    jarl = await make_role(client, freya, guild["id"], "Jarl", frame_id=ring["id"])
    await give(client, freya, guild["id"], thor, jarl["id"])

    ctx, page, errors = await open_page(browser, "thor", "/settings/styles")
    await expect(page.get_by_role("heading", name="Personal styles")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("navigation", name="User settings").get_by_role("link", name="Personal styles")).to_have_attribute(
        "aria-current", "page")
    await page.get_by_role("combobox", name="Style for").select_option(label="In Longhouse")
    form = page.get_by_role("form", name="Your style in Longhouse")
    # No role of thor's shows an icon: the list says why it is empty.
    await expect(form).to_contain_text("No icon is available here")
    await form.get_by_role("radio", name="Gold ring").check()
    await form.get_by_label("Name colour").fill("#ff8800")
    await form.get_by_role("button", name="Save style").click()
    await expect(page.get_by_role("status").filter(has_text="Saved")).to_be_visible(timeout=WAIT)

    answer = await Api(client).get("/users/@me/styles", thor)
    ours = [s for s in answer["styles"] if s["scope"] == "guild"]
    assert [(s["guild_id"], s["frame_id"], s["icon_id"], s["color"]) for s in ours] == [(guild["id"], ring["id"], None, 0xFF8800)]
    member = (await Api(client).get(f"/guilds/{guild['id']}/members/{thor.id}", freya))["member"]
    assert member["style"]["frame_id"] == ring["id"]

    # Clear removes the server's style again.
    await form.get_by_role("button", name="Clear style").click()
    await expect(page.get_by_role("status").filter(has_text="Cleared")).to_be_visible(timeout=WAIT)
    answer = await Api(client).get("/users/@me/styles", thor)
    assert [s for s in answer["styles"] if s["scope"] == "guild"] == []

    assert only_expected(errors) == []
    await ctx.close()


OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  return [...document.querySelectorAll('body *')]
    .filter((e) => e.getClientRects().length && !e.closest('.visually-hidden, [role=tablist], dialog:not([open])'))
    .filter((e) => e.getBoundingClientRect().right > width + 1)
    .map((e) => e.tagName + '.' + [...e.classList].join('.') + ' ' + Math.round(e.getBoundingClientRect().right));
}"""


@pytest.mark.parametrize("scheme", ["dark", "light"])
async def test_customisation_screens_are_accessible_and_fit_a_phone(site, browser, client, accounts, rt, scheme):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    guild = await make_guild(client, freya, "Longhouse")
    await upload_emoji(client, freya, guild["id"], "mead", data=emoji_png())
    await upload_sound(client, freya, guild["id"], "Horn", emoji="📯")
    await upload_sound(client, freya, guild["id"], "Ding", "interface", palette_event="mention")
    ring = await upload_cosmetic(client, freya, guild["id"], "Gold ring", "frame", data=frame_png())
    star = await upload_cosmetic(client, freya, guild["id"], "Star", "icon", data=icon_png())
    await make_role(client, freya, guild["id"], "Jarl", frame_id=ring["id"], icon_id=star["id"])

    screens = [
        (f"/channels/{guild['id']}/settings/emojis", "Emoji"),
        (f"/channels/{guild['id']}/settings/sounds", "Sounds"),
        (f"/channels/{guild['id']}/settings/cosmetics", "Cosmetics"),
        ("/settings/styles", "Personal styles"),
    ]
    for width, height in ((1280, 800), (360, 740)):
        ctx, page, errors = await open_page(browser, "freya", "/healthz", color_scheme=scheme,
                                            viewport={"width": width, "height": height})
        for path, heading in screens:
            await page.goto(f"{ORIGIN}{path}")
            await expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible(timeout=WAIT)
            assert await page.evaluate("document.documentElement.dataset.theme") == scheme
            assert await serious_axe_violations(page) == [], (path, width)
            assert await page.evaluate(OVERFLOW) == [], (path, width)
        assert only_expected(errors) == []
        await ctx.close()

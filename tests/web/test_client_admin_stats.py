"""Administration's servers, settings and statistics in a real headless Chromium (docs/client.md,
"Administration"): an administrator who signed in with password and TOTP sees the statistics drawn as
named SVG charts with bars for what was seeded, and another range asks the service again; lowers a media
limit, which is saved and shown after a reload (and refused in words when out of range, before sending);
lists, searches, renames, makes main and deletes servers (the deletion re-verifies once the sign-in's
step-up window has passed); axe-core finds no serious violation on the three screens, and someone who is
not an administrator is told so."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.accounts import next_code
from tests.support.admin import admin_account
from tests.support.browser import (
    ORIGIN,
    PASSWORD,
    needs_chromium,
    needs_client,
    only_expected,
    open_page,
    serious_axe_violations,
    watch_errors,
)
from tests.support.factories import message_count
from tests.support.guilds import make_guild
from tests.support.messages import post

pytestmark = [needs_chromium, needs_client]

WAIT = 10000


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60",
                                                  "guilds.create": "1000/60", "messages.send": "1000/60"}}


async def admin_page(browser: Any, client: Any, accounts: Any, rt: Any, path: str,
                     **options: Any) -> tuple[Any, Any, list[str], Any]:
    """An instance administrator (tests/support/admin.py) signed in in the browser the way the
    administrator rules want, password and a TOTP code, at `path`: (context, page, console errors, account
    with its `totp_secret`)."""
    odin = await admin_account(client, accounts, rt, "odin")
    context = await browser.new_context(**options)
    page = await context.new_page()
    await page.goto(f"{ORIGIN}/healthz")
    status = await page.evaluate(
        """async ([login, password, totp_code]) => (await fetch('/api/v1/auth/login', {method: 'POST',
             headers: {'Content-Type': 'application/json'}, body: JSON.stringify({login, password, totp_code})})).status""",
        ["odin", PASSWORD, next_code(odin["totp_secret"], rt.clock)])
    assert status == 200, status
    errors = watch_errors(page)
    await page.goto(f"{ORIGIN}{path}")
    return context, page, errors, odin


async def seed(client: Any, accounts: Any, owner_name: str = "freya") -> tuple[Any, dict[str, Any]]:
    """A few people, a server and messages in it: something for every chart to draw."""
    freya = await accounts.register(owner_name)
    for name in ("thor", "loki"):
        await accounts.register(name)
    guild = await make_guild(client, freya, "Longhouse")
    for i in range(6):
        await post(client, freya, guild["system_channel_id"], f"skål {i}")
    return freya, guild


def drawn_bars(page: Any, name: str) -> Any:
    return page.get_by_role("img", name=name, exact=True).locator("rect.bar")


async def test_statistics_draw_named_charts_and_another_range_asks_again(site, browser, client, accounts, rt, clock):
    from playwright.async_api import expect

    _, guild = await seed(client, accounts)
    sent = str(await message_count(rt, guild["system_channel_id"]))  # six, and the server's welcome
    ctx, page, errors, _ = await admin_page(browser, client, accounts, rt, "/admin/stats")
    await expect(page.get_by_role("heading", name="Statistics", level=1)).to_be_visible(timeout=WAIT)

    # The summary counts what was seeded: four people (odin included), the messages, the database.
    cards = page.get_by_role("list", name="Summary")
    await expect(cards.get_by_role("listitem").filter(has_text="Users")).to_contain_text("4", timeout=WAIT)
    await expect(cards.get_by_role("listitem").filter(has_text="Messages")).to_contain_text(sent)
    await expect(cards.get_by_role("listitem").filter(has_text="Database")).to_contain_text("iB")

    # Every chart is an SVG named for what it shows, with bars for today's people and messages.
    for name in ("New users per day", "Messages per day", "Active users by period", "Database and files size",
                 "Messages per server"):
        await expect(page.get_by_role("img", name=name, exact=True)).to_be_visible()
    await expect(drawn_bars(page, "New users per day")).to_have_count(1)
    assert await drawn_bars(page, "New users per day").get_attribute("data-value") == "4"
    assert await drawn_bars(page, "Messages per day").get_attribute("data-value") == sent
    assert await drawn_bars(page, "Messages per server").count() == 1
    await expect(page.get_by_role("img", name="Messages per server")).to_contain_text("Longhouse")
    await expect(drawn_bars(page, "Database and files size")).not_to_have_count(0)

    # The data is there as a table too, behind a button that says what it shows.
    await page.get_by_role("button", name="Show table of User growth").click()
    hide = page.get_by_role("button", name="Hide table of User growth")
    await expect(hide).to_have_attribute("aria-expanded", "true")
    table = page.get_by_role("table", name="User growth")
    await expect(table).to_be_visible()
    await expect(table.get_by_role("row")).to_have_count(31)  # the header and 30 days
    assert await serious_axe_violations(page) == []

    # Another range asks the service again and draws that many days.
    async with page.expect_request(lambda r: "/api/v1/instance/stats" in r.url and "days=7" in r.url):
        await page.get_by_role("radio", name="7 days").check()
    await expect(page.get_by_role("status").filter(has_text="(7 days)")).to_be_visible(timeout=WAIT)
    await expect(table.get_by_role("row")).to_have_count(8)
    await expect(drawn_bars(page, "Messages per day")).to_have_count(1)
    assert only_expected(errors) == []
    await ctx.close()


async def test_lowering_a_media_limit_saves_it_and_refuses_out_of_range_in_words(site, browser, client, accounts,
                                                                               rt, clock):
    from playwright.async_api import expect

    ctx, page, errors, odin = await admin_page(browser, client, accounts, rt, "/admin/settings")
    await expect(page.get_by_role("heading", name="Settings", level=1)).to_be_visible(timeout=WAIT)
    avatars = page.get_by_role("spinbutton", name="Avatars")
    await expect(avatars).to_have_value("8", timeout=WAIT)
    await expect(page.get_by_role("combobox", name="Unit of Avatars")).to_have_value("MiB")
    save = page.get_by_role("button", name="Save", exact=True)
    await expect(save).to_be_disabled()  # nothing changed yet
    await expect(page.get_by_text("Never changed: the defaults apply.")).to_be_visible()
    assert await serious_axe_violations(page) == []

    # Out of range: said in words, nothing sent.
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.method) if "/instance/settings" in r.url else None)
    await avatars.fill("200")
    await expect(page.get_by_text("The largest limit is 100 MiB.")).to_be_visible()
    await expect(save).to_be_disabled()
    await avatars.fill("0.5")
    await page.get_by_role("combobox", name="Unit of Avatars").select_option("KiB")
    await expect(avatars).to_have_value("512")
    await avatars.fill("0.5")
    await expect(page.get_by_text("The smallest limit is 1 KiB.")).to_be_visible()
    assert "PATCH" not in sent

    # Lowered to 2 MiB: only that value goes out, and the answer is shown.
    await page.get_by_role("combobox", name="Unit of Avatars").select_option("MiB")
    await avatars.fill("2")
    async with page.expect_request(lambda r: r.method == "PATCH" and "/instance/settings" in r.url) as req:
        await save.click()
    assert (await req.value).post_data_json == {"media_limits": {"avatar_max_bytes": 2 * 1024 * 1024}}
    await expect(page.get_by_role("status").filter(has_text="Saved: Avatars 2 MiB.")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_text("Last updated")).to_be_visible()
    r = await client.get("/api/v1/instance/settings", headers=odin.headers)
    assert r.json()["settings"]["media_limits"]["avatar_max_bytes"] == 2 * 1024 * 1024

    # After a reload the page shows what the service keeps; the default is one press away.
    await page.reload()
    await expect(avatars).to_have_value("2", timeout=WAIT)
    await page.get_by_role("button", name="Reset Avatars to default (8 MiB)").click()
    await expect(avatars).to_have_value("8")
    await expect(page.get_by_role("button", name="Reset Avatars to default (8 MiB)")).to_be_disabled()
    assert only_expected(errors) == []
    await ctx.close()


async def test_servers_are_listed_searched_renamed_made_main_and_deleted(site, browser, client, accounts, rt,
                                                                        clock):
    from playwright.async_api import expect

    freya, guild = await seed(client, accounts)
    other = await make_guild(client, freya, "Mead Cellar")
    ctx, page, errors, odin = await admin_page(browser, client, accounts, rt, "/admin/servers")
    servers = page.get_by_role("list", name="Servers of this instance")
    longhouse = servers.get_by_role("listitem", name="Longhouse", exact=True)
    await expect(longhouse).to_contain_text("Owner: freya", timeout=WAIT)
    await expect(longhouse).to_contain_text("1 member")
    await expect(servers.get_by_role("listitem", name="Mead Cellar", exact=True)).to_be_visible()
    assert await serious_axe_violations(page) == []

    # Search by name, any case.
    await page.get_by_role("searchbox", name="Search servers").fill("CELLAR")
    await expect(servers.get_by_role("listitem")).to_have_count(1, timeout=WAIT)
    await expect(page.get_by_text("1 server match")).to_be_visible()
    await page.get_by_role("searchbox", name="Search servers").fill("")
    await expect(longhouse).to_be_visible(timeout=WAIT)

    # Rename inline: a name too short is refused in words, a good one is saved and shown.
    await page.get_by_role("button", name="Rename Longhouse").click()
    box = page.get_by_role("textbox", name="New name for Longhouse")
    await box.fill("L")
    await box.press("Enter")
    await expect(page.get_by_role("alert")).to_contain_text("at least 2 characters")
    await box.fill("Great Hall")
    await box.press("Enter")
    await expect(page.get_by_role("status").filter(has_text="Longhouse is now called Great Hall.")).to_be_visible(
        timeout=WAIT)
    hall = servers.get_by_role("listitem", name="Great Hall", exact=True)
    await expect(hall).to_be_visible()
    r = await client.get(f"/api/v1/guilds/{guild['id']}", headers=freya.headers)
    assert r.json()["guild"]["name"] == "Great Hall"

    # The main server: one at a time, filtered with "Main server only".
    await page.get_by_role("button", name="Make main server: Mead Cellar").click()
    cellar = servers.get_by_role("listitem", name="Mead Cellar", exact=True)
    await expect(cellar).to_contain_text("Main server", timeout=WAIT)
    await page.get_by_role("checkbox", name="Main server only").check()
    await expect(servers.get_by_role("listitem")).to_have_count(1, timeout=WAIT)
    await expect(cellar).to_be_visible()
    await page.get_by_role("checkbox", name="Main server only").uncheck()
    await expect(servers.get_by_role("listitem", name="Great Hall", exact=True)).to_be_visible(timeout=WAIT)

    # A server its owner deleted meanwhile: the refusal in words, and it leaves the list.
    r = await client.delete(f"/api/v1/guilds/{guild['id']}", headers=freya.headers)
    assert r.status_code == 204, r.text
    await page.get_by_role("button", name="Make main server: Great Hall").click()
    await expect(page.get_by_role("alert")).to_have_text("Great Hall no longer exists: it was deleted meanwhile.",
                                                         timeout=WAIT)
    await expect(servers.get_by_role("listitem", name="Great Hall", exact=True)).to_have_count(0)

    # Deleting wants the name typed, and once the sign-in's step-up window has passed, a re-verification.
    clock.advance(601)
    await page.get_by_role("button", name="Delete Mead Cellar").click()
    dialog = page.get_by_role("dialog", name="Delete Mead Cellar")
    confirm = dialog.get_by_role("button", name="Delete server")
    await expect(confirm).to_be_disabled()
    await dialog.get_by_role("textbox", name="Type the server name to confirm").fill("Mead Cellar")
    await confirm.click()
    step_up = page.get_by_role("dialog", name="Confirm it's you")
    await expect(step_up).to_be_visible(timeout=WAIT)
    await step_up.get_by_label("Password").fill(PASSWORD)
    await step_up.get_by_role("textbox", name="Authentication code").fill(next_code(odin["totp_secret"], clock))
    await step_up.get_by_role("button", name="Confirm").click()
    await expect(page.get_by_role("status").filter(has_text="Mead Cellar was deleted.")).to_be_visible(timeout=WAIT)
    await expect(servers.get_by_role("listitem", name="Mead Cellar", exact=True)).to_have_count(0)
    r = await client.get(f"/api/v1/guilds/{other['id']}", headers=freya.headers)
    assert r.status_code == 404
    assert only_expected(errors) == []
    await ctx.close()


async def test_the_screens_read_well_on_a_phone_and_refuse_non_administrators(site, browser, client, accounts, rt,
                                                                             clock):
    from playwright.async_api import expect

    await seed(client, accounts)
    ctx, page, errors, _ = await admin_page(browser, client, accounts, rt, "/admin/stats",
                                               viewport={"width": 360, "height": 740}, color_scheme="light")
    chart = page.get_by_role("img", name="New users per day")
    await expect(chart).to_be_visible(timeout=WAIT)
    # Nothing wider than the phone: the charts are drawn at the width they get.
    width = await page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 360, width
    box = await chart.bounding_box()
    assert box is not None and box["width"] <= 360
    assert await serious_axe_violations(page) == []
    for path, heading in (("/admin/settings", "Settings"), ("/admin/servers", "Servers")):
        await page.goto(f"{ORIGIN}{path}")
        await expect(page.get_by_role("heading", name=heading, level=1)).to_be_visible(timeout=WAIT)
        assert await page.evaluate("() => document.documentElement.scrollWidth") <= 360
        assert await serious_axe_violations(page) == []
    assert only_expected(errors) == []
    await ctx.close()

    thor_ctx, thor_page, _ = await open_page(browser, "thor", "/admin/stats")
    await expect(thor_page.get_by_text("You are not an instance administrator")).to_be_visible(timeout=WAIT)
    await expect(thor_page.get_by_role("img", name="New users per day")).to_have_count(0)
    await thor_ctx.close()

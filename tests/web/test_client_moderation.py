"""Server settings for moderation in a real headless Chromium (docs/client.md, "Server settings"): a timeout
from Members blocks the member's composer live and its removal brings it back, a ban takes the server away
from the banned person live and shows in Bans until unbanned, the audit log words what was just done and
filters it, invitations are made, used up and deleted, a template becomes a new server from the server
bar, a member leaves and the owner deletes after re-verifying, and axe-core finds no serious violation."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.browser import (
    ORIGIN,
    PASSWORD,
    needs_chromium,
    needs_client,
    only_expected,
    open_page,
    serious_axe_violations,
)
from tests.support.factories import add_member
from tests.support.guilds import make_guild, make_role, room

pytestmark = [needs_chromium, needs_client]

WAIT = 10000


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60",
                                                  "invites.create": "1000/60", "invites.join": "1000/60",
                                                  "guilds.create": "1000/60"}}


def member_row(page: Any, guild_name: str, name: str) -> Any:
    return page.get_by_role("list", name=f"Members of {guild_name}").get_by_role("listitem", name=name, exact=True)


def section_link(page: Any, label: str) -> Any:
    return page.get_by_role("navigation", name="Server settings").get_by_role("link", name=label, exact=True)


def server_link(page: Any, name: str) -> Any:
    return page.get_by_role("navigation", name="Servers").get_by_role("link", name=name, exact=True)


async def assert_no_axe(page: Any) -> None:
    assert await serious_axe_violations(page) == []


async def join_by_invite(client: Any, inviter: Any, room_id: str, joiner: Any) -> Any:
    r = await client.post(f"/api/v1/channels/{room_id}/invites", json={}, headers=inviter.headers)
    assert r.status_code == 201, r.text
    return await client.post(f"/api/v1/invites/{r.json()['invite']['code']}", headers=joiner.headers)


async def moderate(page: Any, name: str) -> Any:
    await page.get_by_role("button", name=f"Manage {name}", exact=True).click()
    dialog = page.get_by_role("dialog", name=f"Manage {name}")
    await dialog.wait_for(timeout=WAIT)
    return dialog


async def time_out(page: Any, name: str, label: str) -> None:
    dialog = await moderate(page, name)
    await dialog.get_by_role("combobox", name="Timeout duration").select_option(label=label)
    await dialog.get_by_role("button", name="Time out", exact=True).click()
    await page.get_by_role("status").filter(has_text=f"{name} is timed out for {label}").wait_for(timeout=WAIT)
    await page.keyboard.press("Escape")


async def remove(page: Any, how: str, name: str, reason: str | None = None) -> None:
    dialog = await moderate(page, name)
    await dialog.get_by_role("button", name=f"{how} {name}", exact=True).click()
    confirm = page.get_by_role("dialog", name=f"{how} {name}")
    if reason is not None:
        await confirm.get_by_role("textbox", name="Reason").fill(reason)
    await confirm.get_by_role("button", name=how, exact=True).click()
    verb = "banned" if how == "Ban" else "kicked"
    await page.get_by_role("status").filter(has_text=f"{name} was {verb}.").wait_for(timeout=WAIT)


async def test_a_timeout_blocks_the_members_composer_live(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya, "Longhouse")
    await add_member(rt, guild["id"], thor)
    general = guild["system_channel_id"]
    thor_ctx, thor_page, thor_errors = await open_page(browser, "thor", f"/channels/{guild['id']}/{general}")
    composer = thor_page.get_by_role("textbox", name="Message #general")
    await expect(composer).to_be_visible(timeout=WAIT)
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/members")

    # The owner sees every member with the actions she may take; not on herself beyond her nickname.
    row = member_row(page, "Longhouse", "thor")
    await expect(row).to_contain_text("@thor", timeout=WAIT)
    await expect(member_row(page, "Longhouse", "freya")).to_contain_text("Owner")
    dialog = await moderate(page, "thor")
    await expect(dialog.get_by_role("button", name="Kick thor")).to_be_visible()
    await expect(dialog.get_by_role("button", name="Ban thor")).to_be_visible()
    await assert_no_axe(page)

    # Five minutes of timeout: thor's room turns read-only in words, live.
    await dialog.get_by_role("combobox", name="Timeout duration").select_option(label="5 minutes")
    await dialog.get_by_role("button", name="Time out", exact=True).click()
    await expect(dialog.get_by_role("status")).to_contain_text("thor is timed out for 5 minutes", timeout=WAIT)
    await expect(dialog.get_by_role("button", name="Remove timeout")).to_be_visible()
    await expect(row).to_contain_text("Timed out until")
    blocked = thor_page.get_by_role("status").filter(has_text="You are timed out in Longhouse until")
    await expect(blocked).to_be_visible(timeout=WAIT)
    await expect(composer).to_have_count(0)
    r = await client.post(f"/api/v1/channels/{general}/messages", json={"content": "let me speak"}, headers=thor.headers)
    assert r.status_code == 403 and r.json()["error"]["code"] == "perm.denied"

    # Removing it gives thor his composer back, live.
    await dialog.get_by_role("button", name="Remove timeout").click()
    await expect(dialog.get_by_role("status")).to_contain_text("The timeout of thor is removed", timeout=WAIT)
    await expect(composer).to_be_visible(timeout=WAIT)
    await expect(blocked).to_have_count(0)
    await expect(row).not_to_contain_text("Timed out")
    await composer.fill("Back to the mead")
    await composer.press("Enter")
    await expect(thor_page.get_by_role("log", name="Messages").get_by_role("article").filter(has_text="Back to the mead")).to_be_visible(timeout=WAIT)

    # A member without moderation rights is offered no action on others.
    member_ctx, member_page, _ = await open_page(browser, "thor", f"/channels/{guild['id']}/settings/members")
    await expect(member_row(member_page, "Longhouse", "freya")).to_be_visible(timeout=WAIT)
    await expect(member_page.get_by_role("button", name="Manage freya")).to_have_count(0)

    for errs in (errors, thor_errors):
        assert only_expected(errs) == []
    for c in (ctx, thor_ctx, member_ctx):
        await c.close()


async def test_a_ban_takes_the_server_away_live_and_unban_lets_back_in(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya, "Longhouse")
    general = guild["system_channel_id"]
    await add_member(rt, guild["id"], thor)
    thor_ctx, thor_page, thor_errors = await open_page(browser, "thor", f"/channels/{guild['id']}/{general}")
    await expect(server_link(thor_page, "Longhouse")).to_be_visible(timeout=WAIT)
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/members")
    await expect(member_row(page, "Longhouse", "thor")).to_be_visible(timeout=WAIT)

    # The ban asks for confirmation with a reason (axe with that dialog open).
    dialog = await moderate(page, "thor")
    await dialog.get_by_role("button", name="Ban thor", exact=True).click()
    confirm = page.get_by_role("dialog", name="Ban thor")
    await expect(confirm).to_contain_text("cannot come back")
    await confirm.get_by_role("textbox", name="Reason").fill("Drank the last of the mead")
    await assert_no_axe(page)
    await confirm.get_by_role("button", name="Ban", exact=True).click()
    await expect(page.get_by_role("status").filter(has_text="thor was banned.")).to_be_visible(timeout=WAIT)
    await expect(member_row(page, "Longhouse", "thor")).to_have_count(0)

    # Thor loses the server at once and lands home.
    await expect(server_link(thor_page, "Longhouse")).to_have_count(0, timeout=WAIT)
    await thor_page.wait_for_url(f"{ORIGIN}/channels/@me", timeout=WAIT)

    # Bans lists him with the reason and the author; he cannot join again until unbanned.
    await section_link(page, "Bans").click()
    ban = page.get_by_role("list", name="Bans of Longhouse").get_by_role("listitem", name="thor")
    await expect(ban).to_contain_text("Reason: Drank the last of the mead", timeout=WAIT)
    await expect(ban).to_contain_text("Banned by freya")
    await assert_no_axe(page)
    r = await join_by_invite(client, freya, general, thor)
    assert r.status_code == 403 and r.json()["error"]["code"] == "guild.banned"
    await page.get_by_role("button", name="Unban thor").click()
    await expect(page.get_by_role("status").filter(has_text="thor is unbanned")).to_be_visible(timeout=WAIT)
    await expect(ban).to_have_count(0)
    await expect(page.get_by_text("Nobody is banned.")).to_be_visible()
    r = await join_by_invite(client, freya, general, thor)
    assert r.status_code == 200, r.text
    await expect(server_link(thor_page, "Longhouse")).to_be_visible(timeout=WAIT)

    for errs in (errors, thor_errors):
        assert only_expected(errs) == []
    await ctx.close()
    await thor_ctx.close()


async def test_the_audit_log_words_the_actions_and_filters_them(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    people = {name: await accounts.register(name) for name in ("thor", "loki", "sif", "odin")}
    guild = await make_guild(client, freya, "Longhouse")
    general = guild["system_channel_id"]
    for account in people.values():
        await add_member(rt, guild["id"], account)
    # Another actor for the actor filter: odin makes an invitation of his own.
    r = await client.post(f"/api/v1/channels/{general}/invites", json={}, headers=people["odin"].headers)
    assert r.status_code == 201, r.text
    odin_code = r.json()["invite"]["code"]

    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/members")
    await expect(member_row(page, "Longhouse", "sif")).to_be_visible(timeout=WAIT)
    await time_out(page, "sif", "10 minutes")
    await remove(page, "Kick", "loki")
    await remove(page, "Ban", "thor", reason="Oathbreaker")
    await section_link(page, "Invitations").click()
    await page.get_by_role("button", name="Create invitation").click()
    link = page.get_by_role("textbox", name="Invitation link")
    await expect(link).to_be_visible(timeout=WAIT)
    code = (await link.input_value()).rsplit("/", 1)[-1]

    await section_link(page, "Audit log").click()
    log = page.get_by_role("list", name="Audit log entries")
    for sentence in ("freya timed out sif until", "freya kicked loki", "freya banned thor",
                     f"freya created the invitation {code} for #general", f"odin created the invitation {odin_code}",
                     "freya created the server"):
        await expect(log.get_by_role("listitem").filter(has_text=sentence)).to_have_count(1, timeout=WAIT)
    await expect(log.get_by_role("listitem").filter(has_text="freya banned thor")).to_contain_text("Reason: Oathbreaker")
    # Newest first: the invitation was the last thing done.
    await expect(log.get_by_role("listitem").first).to_contain_text(f"freya created the invitation {code}")
    await assert_no_axe(page)

    # The action filter narrows the log to kicks.
    await page.get_by_role("combobox", name="Action").select_option(label="Member kicked")
    await expect(log.get_by_role("listitem")).to_have_count(1, timeout=WAIT)
    await expect(log.get_by_role("listitem")).to_contain_text("freya kicked loki")
    await page.get_by_role("combobox", name="Action").select_option(label="Invitation created")
    await expect(log.get_by_role("listitem")).to_have_count(2, timeout=WAIT)

    # The actor filter keeps only odin's doing: a few letters of his name, then him from the members found
    # (the service's member search), never a typed id.
    await page.get_by_role("combobox", name="Done by").fill("od")
    await page.get_by_role("listbox", name="Done by").get_by_role("option", name=re.compile(r"^odin")).click()
    await expect(page.get_by_role("combobox", name="Done by")).to_have_value("odin")
    await expect(log.get_by_role("listitem")).to_have_count(1, timeout=WAIT)
    await expect(log.get_by_role("listitem")).to_contain_text(f"odin created the invitation {odin_code}")
    await page.get_by_role("combobox", name="Action").select_option(label="All actions")
    await page.get_by_role("button", name="Clear Done by").click()
    await expect(log.get_by_role("listitem")).to_have_count(6, timeout=WAIT)
    # The target filter: thor, banned and so no member any more, is still found by the name the log gives him.
    about = page.get_by_role("combobox", name="About")
    await about.fill("th")
    await page.get_by_role("listbox", name="About").get_by_role("option", name=re.compile(r"^thor.*not a member")).click()
    await expect(log.get_by_role("listitem")).to_have_count(1, timeout=WAIT)
    await expect(log.get_by_role("listitem")).to_contain_text("freya banned thor")
    # And by keyboard: what was done to sif (who is still a member).
    await page.get_by_role("button", name="Clear About").click()
    await about.fill("si")
    await expect(page.get_by_role("listbox", name="About").get_by_role("option", name=re.compile(r"^sif"))).to_be_visible()
    await about.press("Enter")
    await expect(about).to_have_value("sif")
    await expect(log.get_by_role("listitem")).to_have_count(1, timeout=WAIT)
    await expect(log.get_by_role("listitem")).to_contain_text("freya timed out sif")
    await assert_no_axe(page)

    assert only_expected(errors) == []
    await ctx.close()


async def test_invitations_made_used_up_and_deleted(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    sif = await accounts.register("sif")
    guild = await make_guild(client, freya, "Longhouse")
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/invites")

    # One use only: the link shown works once.
    await page.get_by_role("combobox", name="Max uses").select_option(label="1 use")
    await page.get_by_role("combobox", name="Expire after").select_option(label="1 hour")
    await page.get_by_role("button", name="Create invitation").click()
    link = page.get_by_role("textbox", name="Invitation link")
    await expect(link).to_be_visible(timeout=WAIT)
    url = await link.input_value()
    assert url.startswith(f"{ORIGIN}/invite/")
    code = url.rsplit("/", 1)[-1]
    await expect(page.get_by_role("button", name="Copy", exact=True)).to_be_visible()
    row = page.get_by_role("row", name=f"Invitation {code}")
    await expect(row).to_contain_text("0 of 1 uses", timeout=WAIT)
    await expect(row).to_contain_text("Expires in 59 minutes")
    await expect(row).to_contain_text("#general")
    await expect(row).to_contain_text("freya")
    await assert_no_axe(page)

    r = await client.post(f"/api/v1/invites/{code}", headers=sif.headers)
    assert r.status_code == 200 and r.json()["guild_id"] == guild["id"]
    # Used up: it leaves the list as soon as the join shows.
    await expect(row).to_have_count(0, timeout=WAIT)

    # A second one without limits, deleted from the list.
    await page.get_by_role("combobox", name="Max uses").select_option(label="No limit")
    await page.get_by_role("combobox", name="Expire after").select_option(label="Never")
    await page.get_by_role("button", name="Create invitation").click()
    await expect(link).not_to_have_value(url, timeout=WAIT)
    second = (await link.input_value()).rsplit("/", 1)[-1]
    row = page.get_by_role("row", name=f"Invitation {second}")
    await expect(row).to_contain_text("Never expires", timeout=WAIT)
    await row.get_by_role("button", name=f"Delete invitation {second}").click()
    await expect(page.get_by_role("status").filter(has_text=f"The invitation {second} is deleted.")).to_be_visible(timeout=WAIT)
    await expect(row).to_have_count(0)
    r = await client.get(f"/api/v1/invites/{second}")
    assert r.status_code == 404

    # The public invitation cannot be deleted here; the list says why.
    r = await client.patch(f"/api/v1/guilds/{guild['id']}", json={"public": True}, headers=freya.headers)
    assert r.status_code == 200, r.text
    await page.reload()
    public = page.get_by_role("row", name=f"Invitation {r.json()['guild']['public_invite_code']}")
    await expect(public).to_contain_text("Public", timeout=WAIT)
    await expect(public).to_contain_text("stops being public")
    await expect(public.get_by_role("button", name="Delete")).to_have_count(0)

    assert only_expected(errors) == []
    await ctx.close()


async def test_a_template_becomes_a_new_server_from_the_server_bar(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    guild = await make_guild(client, freya, "Longhouse")
    await room(client, freya, guild["id"], name="mead-hall")
    await room(client, freya, guild["id"], name="skald-songs", type="voice")
    await make_role(client, freya, guild["id"], "Jarl", "KICK_MEMBERS")
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/templates")

    await expect(page.get_by_text("You have no templates yet.")).to_be_visible(timeout=WAIT)
    await page.get_by_role("textbox", name="Template name").fill("Longhouse plan")
    await page.get_by_role("textbox", name="Description").fill("Rooms for a proper hall")
    await page.get_by_role("button", name="Save template").click()
    await expect(page.get_by_role("status").filter(has_text="as the template “Longhouse plan”")).to_be_visible(timeout=WAIT)
    item = page.get_by_role("list", name="My templates").get_by_role("listitem", name="Longhouse plan")
    await expect(item).to_contain_text("3 rooms")
    await expect(item).to_contain_text("1 role")
    await assert_no_axe(page)

    # The server bar's create dialog offers it.
    await page.goto(f"{ORIGIN}/channels/@me")
    await page.get_by_role("button", name="Create a server").click()
    dialog = page.get_by_role("dialog", name="Create a server")
    await dialog.get_by_role("textbox", name="Server name").fill("New hall")
    await dialog.get_by_role("combobox", name="Start from a template").select_option(label="Longhouse plan")
    await dialog.get_by_role("button", name="Create", exact=True).click()
    await expect(server_link(page, "New hall")).to_be_visible(timeout=WAIT)
    rooms = page.get_by_role("navigation", name="Rooms")
    for name in ("general", "mead-hall", "skald-songs"):
        await expect(rooms.get_by_role("link", name=name, exact=True)).to_be_visible(timeout=WAIT)
    r = await client.get("/api/v1/users/@me/guilds", headers=freya.headers)
    made = next(g for g in r.json()["guilds"] if g["name"] == "New hall")
    r = await client.get(f"/api/v1/guilds/{made['id']}/roles", headers=freya.headers)
    assert "Jarl" in [role["name"] for role in r.json()["roles"]]

    # The template is deleted from the settings of the new server.
    await page.goto(f"{ORIGIN}/channels/{made['id']}/settings/templates")
    await item.get_by_role("button", name="Delete template Longhouse plan").click()
    await expect(page.get_by_role("status").filter(has_text="is deleted")).to_be_visible(timeout=WAIT)
    await expect(item).to_have_count(0)
    r = await client.get("/api/v1/guild-templates/mine", headers=freya.headers)
    assert r.json()["templates"] == []

    assert only_expected(errors) == []
    await ctx.close()


async def test_a_member_leaves_and_the_owner_deletes_after_step_up(site, browser, client, accounts, rt, clock):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya, "Longhouse")
    await add_member(rt, guild["id"], thor)
    thor_ctx, thor_page, thor_errors = await open_page(browser, "thor", f"/channels/{guild['id']}/settings/members")

    # A member leaves from the settings: the server leaves his bar.
    await thor_page.get_by_role("navigation", name="Server settings").get_by_role("button", name="Leave server").click()
    leaving = thor_page.get_by_role("dialog", name="Leave Longhouse")
    await leaving.get_by_role("button", name="Leave server").click()
    await thor_page.wait_for_url(f"{ORIGIN}/channels/@me", timeout=WAIT)
    await expect(thor_page.get_by_role("navigation", name="Servers")).to_be_visible(timeout=WAIT)
    await expect(server_link(thor_page, "Longhouse")).to_have_count(0)
    r = await client.get(f"/api/v1/guilds/{guild['id']}", headers=thor.headers)
    assert r.status_code == 404

    # The owner is told she cannot leave, and deletes after typing the name and re-verifying.
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/overview")
    await page.get_by_role("navigation", name="Server settings").get_by_role("button", name="Delete server").click()
    deleting = page.get_by_role("dialog", name="Delete Longhouse")
    await expect(deleting).to_contain_text("transfer its ownership")
    confirm = deleting.get_by_role("button", name="Delete server")
    await expect(confirm).to_be_disabled()
    await deleting.get_by_role("textbox", name="Type the server name to confirm").fill("Longhouse")
    clock.advance(601)  # the sign-in's step-up window is over
    await confirm.click()
    step_up = page.get_by_role("dialog", name="Confirm it's you")
    await step_up.get_by_role("textbox", name="Password").fill(PASSWORD)
    await step_up.get_by_role("button", name="Confirm").click()
    await page.wait_for_url(f"{ORIGIN}/channels/@me", timeout=WAIT)
    await expect(page.get_by_role("navigation", name="Servers").get_by_role("link", name="Longhouse")).to_have_count(0, timeout=WAIT)
    r = await client.get(f"/api/v1/guilds/{guild['id']}", headers=freya.headers)
    assert r.status_code == 404

    for errs in (errors, thor_errors):
        assert only_expected(errs) == []
    await ctx.close()
    await thor_ctx.close()


async def test_moderation_sections_in_the_light_theme_pass_axe(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    loki = await accounts.register("loki")
    guild = await make_guild(client, freya, "Longhouse")
    general = guild["system_channel_id"]
    for account in (thor, loki):
        await add_member(rt, guild["id"], account)
    r = await client.put(f"/api/v1/guilds/{guild['id']}/bans/{loki.id}", json={"reason": "Mischief"}, headers=freya.headers)
    assert r.status_code == 204, r.text
    r = await client.post(f"/api/v1/channels/{general}/invites", json={"max_uses": 5}, headers=freya.headers)
    assert r.status_code == 201
    r = await client.post("/api/v1/guild-templates", json={"guild_id": guild["id"], "name": "Plan"}, headers=freya.headers)
    assert r.status_code == 201
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/members",
                                        color_scheme="light", viewport={"width": 360, "height": 740})
    await expect(member_row(page, "Longhouse", "thor")).to_be_visible(timeout=WAIT)
    dialog = await moderate(page, "thor")
    await expect(dialog.get_by_role("combobox", name="Timeout duration")).to_be_visible()
    await assert_no_axe(page)
    await page.keyboard.press("Escape")
    for label, ready in (("Invitations", "uses"), ("Bans", "Mischief"), ("Audit log", "freya banned loki"),
                         ("Templates", "Plan")):
        await section_link(page, label).click()
        await expect(page.get_by_role("main")).to_contain_text(ready, timeout=WAIT)
        await assert_no_axe(page)
    # Nothing overflows the phone width.
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, width
    assert only_expected(errors) == []
    await ctx.close()

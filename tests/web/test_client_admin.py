"""Administration's users and audit log in a real headless Chromium (docs/client.md, "Administration"): an
administrator who signed in with password and TOTP finds a user, bans them with a reason while they are
signed in in another browser, and their client goes to the sign-in screen at once (no reload), where
signing in again is refused in words; the ban shows in the Audit log screen filtered by its action; the
detail view disables what the rules forbid and a refusal of the service is shown in words; a temporary
password is shown once after re-verifying, and its holder is asked to change it after signing in;
someone who is not an administrator is told so; axe-core finds
no serious violation on Users, User detail and Audit log, at 360 px and in the light theme too."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.accounts import next_code
from tests.support.admin import admin_account
from tests.support.admin_browser import admin_context
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

pytestmark = [needs_chromium, needs_client]

WAIT = 10000


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60",
                                                  "auth.login": "1000/60"}}


async def admin_page(browser: Any, client: Any, accounts: Any, rt: Any, path: str,
                     **options: Any) -> tuple[Any, Any, list[str], Any]:
    """An instance administrator (tests/support/admin.py) signed in in the browser as the administrator
    rules want, password and a TOTP code, at `path`: (context, page, console errors, account)."""
    odin = await admin_account(client, accounts, rt, "odin")
    context = await admin_context(browser, rt, odin, **options)
    page = await context.new_page()
    errors = watch_errors(page)
    await page.goto(f"{ORIGIN}{path}")
    return context, page, errors, odin


def nav_link(page: Any, label: str) -> Any:
    return page.get_by_role("navigation", name="Administration").get_by_role("link", name=label, exact=True)


async def open_user(page: Any, name: str, display_name: str) -> None:
    await page.get_by_role("searchbox", name="Search users").fill(name)
    await page.get_by_role("status").filter(has_text="1 user match").wait_for(timeout=WAIT)
    await page.get_by_role("table", name="Users").get_by_role("link", name=f"{display_name} @{name}").click()
    await page.get_by_role("heading", name="Actions").wait_for(timeout=WAIT)


async def test_a_ban_signs_the_user_out_live_and_shows_in_the_audit_log(site, browser, client, accounts, rt):
    thor = await accounts.register("thor")
    await client.patch("/api/v1/users/@me", json={"display_name": "Thor"}, headers=thor.headers)
    await accounts.register("loki")
    # Thor is signed in and connected in his own browser.
    thor_context, thor_page, thor_errors = await open_page(browser, "thor", "/channels/@me")
    await thor_page.get_by_role("button", name="User settings").wait_for(timeout=WAIT)

    context, page, errors, _odin = await admin_page(browser, client, accounts, rt, "/admin")
    await page.get_by_role("heading", name="Users", exact=True).wait_for(timeout=WAIT)
    assert await nav_link(page, "Users").get_attribute("aria-current") == "page"
    # Three accounts: odin, thor and loki.
    await page.get_by_role("status").filter(has_text="3 users").wait_for(timeout=WAIT)
    await open_user(page, "thor", "Thor")
    assert page.url == f"{ORIGIN}/admin/users/{thor['user']['id']}"

    await page.get_by_role("button", name="Ban", exact=True).click()
    dialog = page.get_by_role("dialog", name="Ban Thor")
    await dialog.wait_for(timeout=WAIT)
    # The reason is required: refused in words before anything is sent.
    await dialog.get_by_role("button", name="Ban", exact=True).click()
    await dialog.get_by_role("alert").filter(has_text="Enter a reason.").wait_for(timeout=WAIT)
    await dialog.get_by_role("textbox", name="Reason").fill("Spamming every room")
    await dialog.get_by_role("button", name="Ban", exact=True).click()
    await page.get_by_role("status").filter(has_text="Thor is banned and was signed out everywhere.").wait_for(timeout=WAIT)
    await page.get_by_text("Spamming every room").first.wait_for(timeout=WAIT)
    assert await page.get_by_role("button", name="Unban", exact=True).is_visible()

    # Thor's client is on the sign-in screen without a reload, and signing in again is refused in words.
    await thor_page.wait_for_url(f"{ORIGIN}/login**", timeout=WAIT)
    await thor_page.get_by_role("button", name="Sign in", exact=True).wait_for(timeout=WAIT)
    await thor_page.get_by_label("Username or email").fill("thor")
    await thor_page.get_by_label("Password").fill(PASSWORD)
    await thor_page.get_by_role("button", name="Sign in", exact=True).click()
    refusal = thor_page.get_by_role("alert")
    await refusal.wait_for(timeout=WAIT)
    assert "banned" in (await refusal.inner_text()).lower()

    # The ban is in the audit log, found through its action.
    await nav_link(page, "Audit log").click()
    await page.get_by_role("heading", name="Audit log").wait_for(timeout=WAIT)
    await page.get_by_role("combobox", name="Action").select_option("instance.user_ban")
    await page.get_by_role("status").filter(has_text="1 entry match").wait_for(timeout=WAIT)
    entry = page.get_by_role("list", name="Audit log entries").get_by_role("listitem")
    assert await entry.count() == 1
    text = await entry.inner_text()
    assert "User banned from the instance" in text and "Reason: Spamming every room" in text
    # Named, not numbered: the banned person is a link to their page under their name.
    about = entry.get_by_role("link", name="Thor")
    await about.wait_for(timeout=WAIT)
    assert await about.get_attribute("href") == f"/admin/users/{thor['user']['id']}"
    assert thor["user"]["id"] not in await entry.inner_text()
    # Who did it is picked by name from the instance's users, never typed as an id.
    await page.get_by_role("combobox", name="Done by").fill("od")
    await page.get_by_role("listbox", name="Done by").get_by_role("option", name=re.compile(r"^odin")).click()
    await page.get_by_role("status").filter(has_text="1 entry match").wait_for(timeout=WAIT)
    await page.get_by_role("combobox", name="Done by").fill("thor")
    await page.get_by_role("listbox", name="Done by").get_by_role("option", name=re.compile(r"^Thor @thor")).click()
    await page.get_by_role("status").filter(has_text="0 entries match").wait_for(timeout=WAIT)
    await page.get_by_role("button", name="Clear filters").click()
    await page.get_by_role("status").filter(has_text="entries").wait_for(timeout=WAIT)
    assert await page.get_by_role("combobox", name="Done by").input_value() == ""

    assert only_expected(errors) == []
    assert only_expected(thor_errors) == []
    await context.close()
    await thor_context.close()


async def test_actions_follow_the_rules_and_a_temporary_password_is_shown_once(site, browser, client, accounts, rt, clock):
    await accounts.register("loki")
    context, page, errors, odin = await admin_page(browser, client, accounts, rt, "/admin/users")
    await page.get_by_role("heading", name="Users", exact=True).wait_for(timeout=WAIT)

    # On yourself: no ban, no deletion, each with its reason.
    await page.goto(f"{ORIGIN}/admin/users/{odin['user']['id']}")
    await page.get_by_role("heading", name="Actions").wait_for(timeout=WAIT)
    ban = page.get_by_role("button", name="Ban", exact=True)
    assert await ban.is_disabled()
    assert await page.get_by_text("You cannot ban yourself.").is_visible()
    assert await page.get_by_role("button", name="Delete account").is_disabled()
    # The last administrator cannot step down: the service's refusal is shown in words.
    await page.get_by_role("button", name="Remove administrator").click()
    dialog = page.get_by_role("dialog", name="Remove odin as administrator")
    await dialog.get_by_role("button", name="Remove administrator").click()
    refusal = dialog.get_by_role("alert")
    await refusal.wait_for(timeout=WAIT)
    assert "administrator" in (await refusal.inner_text()).lower()
    await dialog.get_by_role("button", name="Cancel").click()

    # A temporary password for loki once the sign-in's step-up window has passed: re-verify first.
    await nav_link(page, "Users").click()
    await open_user(page, "loki", "loki")
    clock.advance(601)
    await page.get_by_role("button", name="Temporary password").click()
    dialog = page.get_by_role("dialog", name="Temporary password for loki")
    await dialog.get_by_role("button", name="Set a temporary password").click()
    step_up = page.get_by_role("dialog", name="Confirm it's you")
    await step_up.wait_for(timeout=WAIT)
    await step_up.get_by_label("Password", exact=True).fill(PASSWORD)
    await step_up.get_by_label("Authentication code").fill(next_code(odin["totp_secret"], rt.clock))
    await step_up.get_by_role("button", name="Confirm").click()
    shown = dialog.get_by_role("textbox", name="Temporary password")
    await shown.wait_for(timeout=WAIT)
    password = await shown.input_value()
    assert len(password) == 20
    assert await dialog.get_by_text("it will not be shown again").is_visible()
    await dialog.get_by_role("button", name="Done").click()
    assert await page.get_by_text("Temporary password", exact=True).first.is_visible()  # the badge
    r = await client.post("/api/v1/auth/login", json={"login": "loki", "password": password})
    assert r.status_code == 200, r.text
    assert r.json()["user"]["password_reset_required"] is True

    assert only_expected(errors) == []
    await context.close()


async def test_someone_who_is_not_an_administrator_is_told_so(site, browser, client, accounts, rt):
    # Thor was given a temporary password by an administrator: after signing in with it he is asked,
    # not forced, to choose his own.
    odin = await admin_account(client, accounts, rt, "odin")
    thor = await accounts.register("thor")
    r = await client.post(f"/api/v1/instance/users/{thor['user']['id']}/temporary-password", headers=odin.headers)
    assert r.status_code == 200, r.text
    context = await browser.new_context()
    page = await context.new_page()
    errors = watch_errors(page)
    await page.goto(f"{ORIGIN}/login")
    await page.get_by_label("Username or email").fill("thor")
    await page.get_by_label("Password").fill(r.json()["password"])
    await page.get_by_role("button", name="Sign in", exact=True).click()
    prompt = page.get_by_role("region", name="Temporary password")
    await prompt.get_by_text("An administrator set a temporary password.").wait_for(timeout=WAIT)
    assert await prompt.get_by_role("link", name="Change it now.").get_attribute("href") == "/settings/security"
    await prompt.get_by_role("button", name="Dismiss").click()
    await prompt.wait_for(state="detached", timeout=WAIT)

    await page.goto(f"{ORIGIN}/admin/users")
    await page.get_by_role("alert").filter(has_text="You are not an instance administrator.").wait_for(timeout=WAIT)
    await page.get_by_role("link", name="Back to Meadhall").wait_for(timeout=WAIT)
    assert not await nav_link(page, "Audit log").count()
    # The user settings offer no way to administration either.
    await page.goto(f"{ORIGIN}/settings/profile")
    await page.get_by_role("heading", name="My profile").wait_for(timeout=WAIT)
    assert not await page.get_by_role("link", name="Administration").count()
    assert only_expected(errors) == []
    await context.close()


@pytest.mark.parametrize("theme, width", [("dark", 1280), ("light", 360)])
async def test_users_detail_and_audit_log_have_no_serious_axe_violation(site, browser, client, accounts, rt, theme, width):
    thor = await accounts.register("thor")
    context, page, errors, odin = await admin_page(browser, client, accounts, rt, "/settings/profile",
                                                   viewport={"width": width, "height": 800}, color_scheme=theme)
    # Administrators find the console from their user settings.
    await page.get_by_role("link", name="Administration").click()
    await page.get_by_role("status").filter(has_text="2 users").wait_for(timeout=WAIT)
    assert await serious_axe_violations(page) == []
    await page.goto(f"{ORIGIN}/admin/users/{thor['user']['id']}")
    await page.get_by_role("heading", name="Devices").wait_for(timeout=WAIT)
    assert await serious_axe_violations(page) == []
    await page.get_by_role("button", name="Delete account").click()
    dialog = page.get_by_role("dialog", name="Delete thor")
    await dialog.wait_for(timeout=WAIT)
    assert await dialog.get_by_role("button", name="Delete account").is_disabled()
    assert await serious_axe_violations(page) == []
    await dialog.get_by_role("button", name="Cancel").click()
    await page.goto(f"{ORIGIN}/admin/audit")
    await page.get_by_role("list", name="Audit log entries").get_by_role("listitem").first.wait_for(timeout=WAIT)
    assert await serious_axe_violations(page) == []
    assert only_expected(errors) == []
    await context.close()

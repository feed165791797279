"""The sign-in traps in a real headless Chromium (docs/client.md, "Sessions"): a lockout is said with the
time left and never freezes the form; a signed-out page load asks nothing and logs no error; a new account
takes the browser's time zone; the step-up dialog offers a passkey only to someone who has one."""

from __future__ import annotations

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
    watch_errors,
)

pytestmark = [needs_chromium, needs_client]

WAIT = 10000
WRONG = "not the password at all"


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "auth.login": "1000/60",
                                                  "global": "10000/60"}}


def api_calls(page: Any) -> list[tuple[str, str, int]]:
    calls: list[tuple[str, str, int]] = []
    page.on("response", lambda r: calls.append((r.request.method, r.url.removeprefix(ORIGIN), r.status))
            if "/api/v1/" in r.url else None)
    return calls


@pytest.mark.parametrize("scheme", ["dark", "light"])
async def test_a_lockout_is_said_with_the_time_left_and_the_form_stays_usable(site, browser, accounts, scheme):
    from playwright.async_api import expect

    await accounts.register("freya")
    context = await browser.new_context(color_scheme=scheme)
    page = await context.new_page()
    errors = watch_errors(page)
    calls = api_calls(page)
    # The page's clock, so that the countdown can be moved on without waiting minutes.
    await page.clock.install()
    await page.goto(f"{ORIGIN}/login")
    form_login = page.get_by_role("textbox", name="Username or email")
    password = page.get_by_label("Password", exact=True)
    sign_in = page.get_by_role("button", name="Sign in", exact=True)
    alert = page.get_by_role("alert")

    await form_login.fill("freya")
    for attempt in range(5):
        await password.fill(f"{WRONG} {attempt}")
        await sign_in.click()
        await expect(alert).to_be_visible(timeout=WAIT)
        await expect(alert).not_to_contain_text("Too many attempts")
        await expect(sign_in).to_be_enabled()
    # The account is locked now: even the right password is refused, at once and in words, with the time
    # left (the service's Retry-After is 900 s), and nothing is waited out in silence.
    await password.fill(PASSWORD)
    await sign_in.click()
    await expect(alert).to_have_text("Too many attempts. Try again in 15 minutes.", timeout=WAIT)
    logins = [c for c in calls if c[:2] == ("POST", "/api/v1/auth/login")]
    assert [status for _, _, status in logins] == [401] * 5 + [429]
    await expect(sign_in).to_be_enabled()
    await expect(form_login).to_be_editable()
    await expect(password).to_be_editable()
    assert await serious_axe_violations(page) == []

    # The time left counts down by the minute.
    await page.clock.fast_forward("02:00")
    await expect(alert).to_have_text("Too many attempts. Try again in 13 minutes.", timeout=WAIT)
    # Trying again during the lock is allowed and answered the same way, without a retry loop.
    await sign_in.click()
    await expect(alert).to_contain_text("Too many attempts", timeout=WAIT)
    await expect(sign_in).to_be_enabled()
    assert [c[2] for c in calls if c[:2] == ("POST", "/api/v1/auth/login")][6:] == [429]
    # Once the time is up the message goes.
    await page.clock.fast_forward("16:00")
    await expect(alert).to_have_count(0, timeout=WAIT)

    assert [e for e in errors if "429" not in e and "401" not in e] == []
    await context.close()


async def test_a_signed_out_load_asks_nothing_and_logs_no_error(site, browser):
    from playwright.async_api import expect

    context = await browser.new_context()
    page = await context.new_page()
    errors = watch_errors(page)
    calls = api_calls(page)
    await page.goto(f"{ORIGIN}/login")
    await expect(page.get_by_role("textbox", name="Username or email")).to_be_visible(timeout=WAIT)
    # A room's address while signed out: sign-in, with the way back.
    await page.goto(f"{ORIGIN}/channels/@me")
    await expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible(timeout=WAIT)
    assert page.url == f"{ORIGIN}/login?next=%2Fchannels%2F%40me"
    assert not any(path.startswith("/api/v1/users/@me") for _, path, _ in calls), calls
    assert errors == []
    await context.close()


async def test_a_reload_while_signed_in_still_finds_the_session(site, browser, accounts):
    from playwright.async_api import expect

    await accounts.register("freya")
    context, page, errors = await open_page(browser, "freya", "/channels/@me")
    await expect(page.get_by_role("button", name="Sign out")).to_be_visible(timeout=WAIT)
    await page.reload()
    await expect(page.get_by_role("button", name="Sign out")).to_be_visible(timeout=WAIT)
    assert errors == []
    await context.close()


async def test_a_new_account_takes_the_browsers_time_zone(site, browser):
    from playwright.async_api import expect

    context = await browser.new_context(timezone_id="America/Halifax")
    page = await context.new_page()
    errors = watch_errors(page)
    await page.goto(f"{ORIGIN}/register")
    await page.get_by_role("textbox", name="Username").fill("ingrid")
    await page.get_by_role("textbox", name="Email").fill("ingrid@example.com")
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Create account").click()
    await expect(page.get_by_role("button", name="Sign out")).to_be_visible(timeout=WAIT)
    me = await page.evaluate("async () => (await (await fetch('/api/v1/users/@me')).json()).user")
    assert me["username"] == "ingrid" and me["timezone"] == "America/Halifax"
    assert errors == []
    await context.close()


async def test_the_step_up_dialog_offers_a_passkey_only_to_someone_who_has_one(site, browser, accounts, clock):
    from playwright.async_api import expect

    await accounts.register("freya")
    context, page, errors = await open_page(browser, "freya", "/settings/security")
    await expect(page.get_by_role("heading", name="Password")).to_be_visible(timeout=WAIT)
    clock.advance(601)  # past the sign-in's step-up window: the change asks to confirm
    await page.get_by_label("New password", exact=True).fill(PASSWORD + " anew")
    await page.get_by_label("Confirm new password").fill(PASSWORD + " anew")
    # The dialog asks the service which passkeys there are (none) before deciding.
    async with page.expect_response(lambda r: r.url == f"{ORIGIN}/api/v1/auth/passkeys", timeout=WAIT) as listed:
        await page.get_by_role("button", name="Change password").click()
    assert (await (await listed.value).json())["passkeys"] == []
    dialog = page.get_by_role("dialog", name="Confirm it's you")
    await expect(dialog).to_be_visible(timeout=WAIT)
    await expect(dialog.get_by_role("button", name="Use a passkey instead")).to_have_count(0)
    await expect(dialog.get_by_label("Password", exact=True)).to_be_visible()
    await dialog.get_by_role("button", name="Cancel").click()
    await expect(dialog).to_be_hidden()
    assert only_expected(errors) == []  # the 403 asking for the step-up
    await context.close()

"""Passkeys in a real headless Chromium with its virtual authenticator (the DevTools protocol's WebAuthn
domain, through Playwright's CDP session; docs/client.md): a passkey added in the settings, the person signed
out and back in by pressing `Sign in with a passkey` without typing anything, the passkey renamed after a
re-verification done with the passkey itself, removed, and then refused in words at sign-in; with an IP
address as the domain the settings explain why passkeys are off and sign-in offers no passkey button; no
serious accessibility violation on either screen."""

from __future__ import annotations

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


def _passkey_routes_present() -> bool:
    from meadhall.app import api_routers
    return any(getattr(r, "path", "") == "/auth/passkeys/login/verify" for router in api_routers() for r in router.routes)


needs_passkey_routes = pytest.mark.skipif(not _passkey_routes_present(),
                                          reason="the service's passkey routes (issue 19, service side) are not there yet")


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60",
                                                  "auth.passkey": "1000/60", "auth.step_up": "1000/60"},
            **getattr(request, "param", {})}


async def virtual_authenticator(page: Any) -> tuple[Any, str]:
    """A platform authenticator holding discoverable keys that verifies the user and answers by itself."""
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("WebAuthn.enable", {"enableUI": False})
    answer = await cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True}})
    return cdp, answer["authenticatorId"]


def passkey_row(page: Any, name: str) -> Any:
    return page.get_by_role("row").filter(has=page.get_by_role("cell", name=name, exact=True))


@needs_passkey_routes
async def test_passkey_added_signed_in_with_renamed_and_removed(site, browser, accounts, clock):
    from playwright.async_api import expect

    await accounts.register("astrid")
    context, page, errors = await open_page(browser, "astrid", "/settings/passkeys")
    cdp, authenticator = await virtual_authenticator(page)

    await expect(page.get_by_role("heading", name="Passkeys", exact=True)).to_be_visible(timeout=WAIT)
    await expect(page.get_by_text("You have no passkeys yet.")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_text("up to 10 passkeys")).to_be_visible()
    assert await serious_axe_violations(page) == []

    # Added under a chosen name (the sign-in's own step-up window covers it); the browser now holds one
    # discoverable key for this site.
    await page.get_by_role("textbox", name="Name (optional)").fill("Work laptop")
    await page.get_by_role("button", name="Add a passkey").click()
    await expect(page.get_by_role("status")).to_contain_text("The passkey “Work laptop” was added", timeout=WAIT)
    row = passkey_row(page, "Work laptop")
    await expect(row).to_contain_text("just now")
    await expect(row).to_contain_text("never")
    await expect(page.get_by_text("1 of 10 passkeys.")).to_be_visible()
    held = (await cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator}))["credentials"]
    assert len(held) == 1 and held[0]["isResidentCredential"] and held[0]["rpId"] == "localhost"
    assert await serious_axe_violations(page) == []

    # Signed out: the sign-in screen offers the passkey in the autofill of the username field (a conditional
    # request), which the virtual authenticator answers at once: signed in without typing or pressing.
    # Waiting for the autofill's own verify (not just "not on /login", which holds before the sign-out has
    # even navigated) so that presence is only switched off below once this request was answered.
    async with page.expect_response(lambda r: r.url.endswith("/auth/passkeys/login/verify") and r.ok):
        await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("button", name="Sign out")).to_be_visible(timeout=WAIT)
    await expect(page).not_to_have_url(f"{ORIGIN}/login", timeout=WAIT)
    await expect(page.get_by_role("textbox", name="Username or email")).to_have_count(0)

    # With the authenticator waiting for a touch, the autofill's request stays open; pressing the button
    # stops it and signs in with the passkey alone, nothing typed into the form.
    await cdp.send("WebAuthn.setAutomaticPresenceSimulation", {"authenticatorId": authenticator, "enabled": False})
    async with page.expect_response(lambda r: r.url.endswith("/auth/passkeys/login/options")):
        await page.get_by_role("button", name="Sign out").click()
    await expect(page).to_have_url(f"{ORIGIN}/login", timeout=WAIT)
    login = page.get_by_role("textbox", name="Username or email")
    await expect(page.get_by_role("button", name="Sign in with a passkey")).to_be_visible(timeout=WAIT)
    assert await login.get_attribute("autocomplete") == "username webauthn"
    assert await serious_axe_violations(page) == []
    await cdp.send("WebAuthn.setAutomaticPresenceSimulation", {"authenticatorId": authenticator, "enabled": True})
    ceremonies: list[str] = []
    page.on("request", lambda r: ceremonies.append(r.url.rsplit("/", 1)[1]) if "/auth/passkeys/login/" in r.url else None)
    await page.get_by_role("button", name="Sign in with a passkey").click()
    await expect(page).not_to_have_url(f"{ORIGIN}/login", timeout=WAIT)
    assert ceremonies == ["options", "verify"]  # the button's own ceremony, the autofill's left unanswered
    assert await login.count() == 0
    me = await page.evaluate("async () => (await fetch('/api/v1/auth/sessions')).json()")
    current = [s for s in me["sessions"] if s["current"]]
    assert current and current[0]["method"] == "passkey"

    # The list shows the use; a rename after the step-up window asks to confirm, done with the passkey.
    await page.goto(f"{ORIGIN}/settings/passkeys")
    await expect(passkey_row(page, "Work laptop")).not_to_contain_text("never", timeout=WAIT)
    clock.advance(601)
    await page.get_by_role("button", name="Rename Work laptop").click()
    rename = page.get_by_role("dialog", name="Rename passkey")
    await rename.get_by_role("textbox", name="Name").fill("Phone")
    await rename.get_by_role("button", name="Save").click()
    step_up = page.get_by_role("dialog", name="Confirm it's you")
    await expect(step_up).to_contain_text("Renaming a passkey", timeout=WAIT)
    await step_up.get_by_role("button", name="Use a passkey instead").click()
    await expect(step_up).to_be_hidden(timeout=WAIT)
    await expect(page.get_by_role("status")).to_contain_text("now called “Phone”", timeout=WAIT)
    await expect(passkey_row(page, "Phone")).to_be_visible()

    # Removed after a confirmation; the key left in the browser is then refused at sign-in, in words.
    await page.get_by_role("button", name="Remove Phone").click()
    confirm = page.get_by_role("dialog", name="Remove passkey?")
    await expect(confirm).to_contain_text("“Phone” will no longer sign you in")
    await confirm.get_by_role("button", name="Remove passkey").click()
    await expect(page.get_by_role("status")).to_contain_text("was removed", timeout=WAIT)
    await expect(page.get_by_text("You have no passkeys yet.")).to_be_visible()
    listed = await page.evaluate("async () => (await fetch('/api/v1/auth/passkeys')).json()")
    assert listed == {"passkeys": []}

    await page.get_by_role("button", name="Sign out").click()
    await expect(page).to_have_url(f"{ORIGIN}/login", timeout=WAIT)
    await page.get_by_role("button", name="Sign in with a passkey").click()
    await expect(page.get_by_role("alert")).to_contain_text("That passkey was not recognised", timeout=WAIT)
    await expect(page).to_have_url(f"{ORIGIN}/login")

    assert only_expected(errors) == []
    await context.close()


@needs_passkey_routes
@pytest.mark.parametrize("settings_overrides", [{"DOMAIN": "127.0.0.1"}], indirect=True)
async def test_passkeys_off_on_an_ip_address_domain(site, browser, accounts):
    from playwright.async_api import expect

    await accounts.register("bjorn")
    context, page, errors = await open_page(browser, "bjorn", "/settings/passkeys")
    await expect(page.get_by_text("Passkeys are off on this server")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_text("You have no passkeys yet.")).to_be_visible()
    await expect(page.get_by_role("button", name="Add a passkey")).to_have_count(0)
    assert await serious_axe_violations(page) == []

    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("button", name="Sign in with a passkey")).to_have_count(0)
    assert await page.get_by_role("textbox", name="Username or email").get_attribute("autocomplete") == "username"
    assert only_expected(errors) == []
    await context.close()

"""User settings in a real headless Chromium (docs/client.md, "User settings"): two-factor authentication
enrolled from the QR code screen and then asked at sign-in (a TOTP code, a backup code, the same backup
code refused), a password change through the step-up dialog, an avatar cropped and uploaded that another
member sees live, sessions listed and revoked, the profile saved, the first-sign-in welcome, and no
serious accessibility violation on any of these screens (dark and light)."""

from __future__ import annotations

import re
import struct
import zlib
from typing import Any

import pytest

from tests.support.accounts import bearer, login, next_code, second_session, totp_code
from tests.support.browser import (
    ORIGIN,
    PASSWORD,
    needs_chromium,
    needs_client,
    open_page,
    serious_axe_violations,
)
from tests.support.factories import add_member
from tests.support.guilds import make_guild

pytestmark = [needs_chromium, needs_client]

WAIT = 10000
NEW_PASSWORD = "a completely new passphrase"


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "auth.login": "1000/60", "global": "10000/60",
                                                  "auth.2fa": "1000/60", "auth.step_up": "1000/60",
                                                  "auth.password": "1000/60", "uploads": "1000/60"}}


def png(width: int, height: int) -> bytes:
    """A small gradient PNG (a real picture for the crop step)."""
    rows = b"".join(b"\x00" + bytes(v for x in range(width) for v in (x * 255 // width, y * 255 // height, 90))
                    for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def only_expected(errors: list[str]) -> list[str]:
    """Console errors other than the refused requests the scenario provokes on purpose."""
    return [e for e in errors if not any(code in e for code in ("401", "403", "409", "422"))]


async def no_serious_violations(page: Any, where: str) -> None:
    violations = await serious_axe_violations(page)
    assert violations == [], f"{where}: {violations}"


async def sign_in(page: Any, password: str, code: str | None = None) -> None:
    """The sign-in form; with `code`, the second step that asks for the authentication code."""
    from playwright.async_api import expect

    await page.get_by_role("textbox", name="Username or email").fill("freya")
    await page.get_by_label("Password", exact=True).fill(password)
    await page.get_by_role("button", name="Sign in", exact=True).click()
    if code is not None:
        box = page.get_by_role("textbox", name="Authentication code")
        await expect(box).to_be_visible(timeout=WAIT)
        await box.fill(code)
        await page.get_by_role("button", name="Sign in", exact=True).click()


async def test_two_factor_enrolment_then_sign_in_with_code_and_backup_code(site, browser, client, accounts, clock):
    from playwright.async_api import expect

    await accounts.register("freya")
    context, page, errors = await open_page(browser, "freya", "/settings/security")

    await page.get_by_role("button", name="Set up two-factor authentication").click()
    qr = page.get_by_role("img", name=re.compile("QR code"))
    await expect(qr).to_be_visible(timeout=WAIT)
    assert (await qr.get_attribute("src") or "").startswith("data:image/png;base64,")
    # The data: image is allowed by the page's Content-Security-Policy: it really drew.
    assert await qr.evaluate("img => img.complete && img.naturalWidth > 0")
    await no_serious_violations(page, "security with the QR code")
    secret = await page.get_by_role("textbox", name="Secret key").input_value()
    assert re.fullmatch(r"[A-Z2-7]{16,}", secret), secret

    # A wrong code is refused in words; the right one turns it on and shows the backup codes once.
    await page.get_by_role("textbox", name="Authentication code").fill("000000" if totp_code(secret, clock) != "000000" else "111111")
    await page.get_by_role("button", name="Enable").click()
    await expect(page.get_by_role("alert")).to_contain_text("Invalid or already used code", timeout=WAIT)
    await page.get_by_role("textbox", name="Authentication code").fill(totp_code(secret, clock))
    await page.get_by_role("button", name="Enable").click()
    codes_list = page.get_by_role("list", name="Backup codes")
    await expect(codes_list.get_by_role("listitem")).to_have_count(8, timeout=WAIT)
    codes = [c.strip() for c in await codes_list.get_by_role("listitem").all_inner_texts()]
    assert all(re.fullmatch(r"[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}", c) for c in codes), codes
    await expect(page.get_by_role("button", name="Download")).to_be_visible()
    await page.get_by_role("button", name="I saved them").click()
    await expect(codes_list).to_have_count(0)
    await expect(page.get_by_role("button", name="Disable two-factor authentication")).to_be_visible()
    await expect(page.get_by_role("button", name="Regenerate backup codes")).to_be_visible()

    # Sign out from the settings, then sign in: the password alone is not enough any more.
    await page.get_by_role("navigation", name="User settings").get_by_role("button", name="Sign out").click()
    await expect(page).to_have_url(re.compile(r"/login"), timeout=WAIT)
    await sign_in(page, PASSWORD, next_code(secret, clock))  # the enabling used this step's code
    await expect(page.get_by_role("button", name="User settings")).to_be_visible(timeout=WAIT)

    # A backup code signs in once; the same code is then refused in words.
    await page.get_by_role("button", name="Sign out", exact=True).click()
    await expect(page).to_have_url(re.compile(r"/login"), timeout=WAIT)
    await sign_in(page, PASSWORD, codes[0])
    await expect(page.get_by_role("button", name="User settings")).to_be_visible(timeout=WAIT)
    await page.get_by_role("button", name="Sign out", exact=True).click()
    await expect(page).to_have_url(re.compile(r"/login"), timeout=WAIT)
    await sign_in(page, PASSWORD, codes[0])
    await expect(page.get_by_role("alert")).to_contain_text("Invalid or already used code", timeout=WAIT)
    assert "/login" in page.url

    assert only_expected(errors) == []
    await context.close()


async def test_password_change_asks_to_confirm_it_is_you(site, browser, client, accounts, clock):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    other = await second_session(client, freya)
    context, page, errors = await open_page(browser, "freya", "/settings/security")
    await expect(page.get_by_role("heading", name="Password")).to_be_visible(timeout=WAIT)
    clock.advance(601)  # the sign-in's step-up window (10 minutes) has lapsed

    # The two new passwords must agree before anything is sent.
    await page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    await page.get_by_label("Confirm new password").fill(NEW_PASSWORD + "!")
    await page.get_by_role("button", name="Change password").click()
    await expect(page.get_by_role("alert")).to_contain_text("not the same", timeout=WAIT)

    await page.get_by_label("Confirm new password").fill(NEW_PASSWORD)
    await page.get_by_role("button", name="Change password").click()
    dialog = page.get_by_role("dialog", name="Confirm it's you")
    await expect(dialog).to_be_visible(timeout=WAIT)
    await expect(dialog).to_contain_text("current password")
    await no_serious_violations(page, "the step-up dialog")

    # A wrong password is refused in words and the dialog stays; the right one lets the change through.
    await dialog.get_by_label("Password", exact=True).fill("not my password at all")
    await dialog.get_by_role("button", name="Confirm").click()
    await expect(dialog.get_by_role("alert")).to_contain_text("That password is not right", timeout=WAIT)
    await dialog.get_by_label("Password", exact=True).fill(PASSWORD)
    await dialog.get_by_role("button", name="Confirm").click()
    await expect(dialog).to_be_hidden(timeout=WAIT)
    await expect(page.get_by_role("status").filter(has_text="Your password was changed")).to_contain_text(
        "other devices were signed out", timeout=WAIT)

    # The window is open now: a password from the leaked list is refused at once, in words.
    await page.get_by_label("New password", exact=True).fill("1234567890")
    await page.get_by_label("Confirm new password").fill("1234567890")
    await page.get_by_role("button", name="Change password").click()
    await expect(page.get_by_role("alert")).to_contain_text("too common", timeout=WAIT)
    await expect(dialog).to_be_hidden()

    assert (await login(client, "freya", NEW_PASSWORD)).status_code == 200
    assert (await login(client, "freya", PASSWORD)).status_code == 401
    # The other session was signed out by the change; this device stays signed in.
    assert (await client.get("/api/v1/users/@me", headers=bearer(other["token"]))).status_code == 401
    await page.reload()
    await expect(page.get_by_role("heading", name="Security", exact=True)).to_be_visible(timeout=WAIT)

    assert only_expected(errors) == []
    await context.close()


async def test_cancelled_step_up_changes_nothing(site, browser, client, accounts, clock):
    from playwright.async_api import expect

    await accounts.register("freya")
    context, page, errors = await open_page(browser, "freya", "/settings/security")
    await expect(page.get_by_role("heading", name="Password")).to_be_visible(timeout=WAIT)
    clock.advance(601)
    await page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    await page.get_by_label("Confirm new password").fill(NEW_PASSWORD)
    await page.get_by_role("button", name="Change password").click()
    dialog = page.get_by_role("dialog", name="Confirm it's you")
    await expect(dialog).to_be_visible(timeout=WAIT)
    await dialog.get_by_role("button", name="Cancel").click()
    await expect(dialog).to_be_hidden()
    await expect(page.get_by_role("alert")).to_contain_text("not changed", timeout=WAIT)
    assert (await login(client, "freya", PASSWORD)).status_code == 200
    assert only_expected(errors) == []
    await context.close()


async def test_avatar_cropped_and_uploaded_is_seen_live_by_another_member(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    guild = await make_guild(client, freya, "Mead Hall")
    await add_member(rt, guild["id"], thor)
    room = guild["system_channel_id"]

    thor_ctx, thor_page, thor_errors = await open_page(browser, "thor", f"/channels/{guild['id']}/{room}")
    members = thor_page.get_by_role("complementary", name="Members")
    await expect(members).to_contain_text("freya", timeout=WAIT)

    ctx, page, errors = await open_page(browser, "freya", "/settings/profile")
    await expect(page.get_by_role("button", name="Upload an avatar")).to_be_visible(timeout=WAIT)
    await page.get_by_label("Choose an avatar picture").set_input_files(
        files=[{"name": "shield.png", "mimeType": "image/png", "buffer": png(120, 80)}])
    dialog = page.get_by_role("dialog", name="Crop your avatar")
    await expect(dialog).to_be_visible(timeout=WAIT)
    await no_serious_violations(page, "the crop dialog")
    # Zoom in with the slider's keys and move the picture with the crop area's keys.
    zoom = dialog.get_by_role("slider", name="Zoom")
    await zoom.focus()
    for _ in range(20):
        await zoom.press("ArrowRight")
    assert float(await zoom.input_value()) > 1
    area = dialog.get_by_role("application", name=re.compile("Crop area"))
    await area.focus()
    await area.press("ArrowLeft")
    await dialog.get_by_role("button", name="Save avatar").click()
    await expect(dialog).to_be_hidden(timeout=WAIT)
    await expect(page.get_by_role("status").filter(has_text="Your new avatar is saved")).to_be_visible(timeout=WAIT)

    me = (await client.get("/api/v1/users/@me", headers=freya.headers)).json()["user"]
    avatar = me["avatar"]
    assert avatar
    # The exported avatar is the square crop.
    served = await client.get(f"/files/{avatar}", headers=freya.headers)
    assert served.status_code == 200
    assert served.headers["content-type"] in ("image/webp", "image/png")
    # Freya's own screens and Thor's member list show it without reload (MEMBER_UPDATE).
    await expect(page.locator(f'img[src="/files/{avatar}"]').first).to_be_visible(timeout=WAIT)
    await expect(members.locator(f'img[src="/files/{avatar}"]')).to_be_visible(timeout=WAIT)

    # Removing it: the letter comes back for Thor too.
    await page.get_by_role("button", name="Remove avatar").click()
    await expect(page.get_by_role("status").filter(has_text="Your avatar was removed")).to_be_visible(timeout=WAIT)
    await expect(members.locator(f'img[src="/files/{avatar}"]')).to_have_count(0, timeout=WAIT)

    for e in (errors, thor_errors):
        assert only_expected(e) == []
    await ctx.close()
    await thor_ctx.close()


async def test_sessions_listed_revoked_and_signed_out_everywhere(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    other = await second_session(client, freya)
    context, page, errors = await open_page(browser, "freya", "/settings/sessions")

    table = page.get_by_role("table")
    await expect(table.get_by_role("row")).to_have_count(4, timeout=WAIT)  # a header, the registration, the API, this one
    this_row = table.get_by_role("row").filter(has_text="This device")
    await expect(this_row).to_contain_text("Chrome")
    await expect(this_row.get_by_role("button")).to_have_count(0)
    await no_serious_violations(page, "sessions")

    # The API session (python-httpx) is signed out from here; its token no longer works.
    api_rows = table.get_by_role("row").filter(has_text="python-httpx")
    await expect(api_rows).to_have_count(2)  # the registration and the second sign-in
    await api_rows.first.get_by_role("button", name=re.compile("^Sign out")).click()
    await expect(page.get_by_role("status").filter(has_text="was signed out")).to_be_visible(timeout=WAIT)
    await expect(table.get_by_role("row")).to_have_count(3)
    answers = [(await client.get("/api/v1/users/@me", headers=h)).status_code for h in (freya.headers, bearer(other["token"]))]
    assert sorted(answers) == [200, 401], answers

    # Sign out everywhere, confirmed first: this device returns to sign-in and no token works any more.
    await page.get_by_role("button", name="Sign out everywhere").click()
    confirm = page.get_by_role("dialog", name="Sign out everywhere?")
    await expect(confirm).to_be_visible()
    await confirm.get_by_role("button", name="Sign out all devices").click()
    await expect(page).to_have_url(re.compile(r"/login"), timeout=WAIT)
    for headers in (freya.headers, bearer(other["token"])):
        assert (await client.get("/api/v1/users/@me", headers=headers)).status_code == 401

    assert only_expected(errors) == []
    await context.close()


@pytest.mark.parametrize("scheme", ["dark", "light"])
async def test_profile_saved_and_screens_accessible(site, browser, client, accounts, scheme):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    context, page, errors = await open_page(browser, "freya", "/settings/profile", color_scheme=scheme)
    await expect(page.get_by_role("heading", name="My profile")).to_be_visible(timeout=WAIT)
    await no_serious_violations(page, f"profile ({scheme})")

    await page.get_by_role("textbox", name="Display name").fill("Freya of Vanaheim")
    await page.get_by_role("textbox", name="Bio").fill("Keeper of the mead.\nRider of cats.")
    await page.get_by_role("combobox", name="Status").select_option("invisible")
    await expect(page.get_by_text("others see you as offline")).to_be_visible()
    await page.get_by_role("textbox", name="Custom status").fill("Brewing")
    # The language is a choice of the languages the client speaks, each named in itself.
    language = page.get_by_role("combobox", name="Language")
    assert await language.locator("option").all_inner_texts() == ["English", "Русский"]
    zone = page.get_by_role("combobox", name="Time zone")
    await zone.fill("Mars/Olympus_Mons")
    await page.get_by_role("button", name="Save profile").click()
    await expect(page.get_by_role("alert")).to_contain_text("Some fields need attention", timeout=WAIT)
    await expect(page.get_by_text("not a time zone this browser knows")).to_be_visible()
    await zone.fill("America/New_York")
    # The preview shows what others will see while it is edited: offline, since invisible.
    preview = page.get_by_role("region", name="How others see you")
    await expect(preview).to_contain_text("Freya of Vanaheim")
    await expect(preview).to_contain_text("Offline")
    await page.get_by_role("button", name="Save profile").click()
    await expect(page.get_by_role("status").filter(has_text="Your profile is saved")).to_be_visible(timeout=WAIT)

    user = (await client.get("/api/v1/users/@me", headers=freya.headers)).json()["user"]
    assert (user["display_name"], user["bio"], user["status"], user["custom_status"], user["locale"], user["timezone"]) == (
        "Freya of Vanaheim", "Keeper of the mead.\nRider of cats.", "invisible", "Brewing", "en", "America/New_York")

    # The other sections, each without a serious violation.
    nav = page.get_by_role("navigation", name="User settings")
    for link, heading in (("Security", "Security"), ("Devices", "Devices"), ("Appearance", "Appearance")):
        await nav.get_by_role("link", name=link).click()
        await expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible(timeout=WAIT)
        await expect(page.get_by_role("status").filter(has_text="Loading")).to_have_count(0, timeout=WAIT)
        await no_serious_violations(page, f"{link} ({scheme})")
    other = "light" if scheme == "dark" else "dark"
    await page.get_by_role("radio", name=other.capitalize()).check()
    assert await page.evaluate("document.documentElement.dataset.theme") == other
    # An unknown section opens the profile.
    await page.goto(f"{ORIGIN}/settings/nothing-here")
    await expect(page.get_by_role("heading", name="My profile")).to_be_visible(timeout=WAIT)

    assert only_expected(errors) == []
    await context.close()


async def test_welcome_card_greets_new_accounts_without_blocking_them(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    context, page, errors = await open_page(browser, "freya", "/channels/@me")

    welcome = page.get_by_role("region", name=re.compile("Welcome to Meadhall"))
    await expect(welcome).to_be_visible(timeout=WAIT)
    # It is a card, not a modal: nothing else is covered and the focus is not taken.
    assert await page.evaluate("document.querySelector('dialog[open]') === null")
    assert await page.evaluate("!document.activeElement || !document.activeElement.closest('section')")
    await no_serious_violations(page, "home with the welcome card")

    await welcome.get_by_role("button", name="Set up my profile").click()
    dialog = page.get_by_role("dialog", name="Welcome to Meadhall")
    await expect(dialog).to_be_visible()
    await expect(dialog.get_by_role("textbox", name="Display name")).to_have_value("freya")
    await no_serious_violations(page, "the welcome dialog")
    await dialog.get_by_role("textbox", name="Display name").fill("Freya")
    await dialog.get_by_role("textbox", name="Bio (optional)").fill("New in the hall.")
    await dialog.get_by_role("button", name="Continue").click()
    await expect(welcome).to_have_count(0, timeout=WAIT)
    user = (await client.get("/api/v1/users/@me", headers=freya.headers)).json()["user"]
    assert user["onboarding_completed_at"] and user["display_name"] == "Freya" and user["bio"] == "New in the hall."
    await page.reload()
    await expect(page.get_by_role("button", name="User settings")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("region", name=re.compile("Welcome to Meadhall"))).to_have_count(0)

    # Skip completes it with the name as it is.
    thor_ctx, thor_page, thor_errors = await open_page(browser, "thor", "/channels/@me")
    thor_welcome = thor_page.get_by_role("region", name=re.compile("Welcome to Meadhall"))
    await thor_welcome.get_by_role("button", name="Skip").click()
    await expect(thor_welcome).to_have_count(0, timeout=WAIT)
    user = (await client.get("/api/v1/users/@me", headers=thor.headers)).json()["user"]
    assert user["onboarding_completed_at"] and user["display_name"] == "thor"

    for e in (errors, thor_errors):
        assert only_expected(e) == []
    await context.close()
    await thor_ctx.close()


async def test_language_choice_switches_the_client_and_is_kept(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    context, page, errors = await open_page(browser, "freya", "/settings/profile")
    await expect(page.get_by_role("heading", name="My profile")).to_be_visible(timeout=WAIT)
    assert await page.evaluate("document.documentElement.lang") == "en"
    zone = page.get_by_role("combobox", name="Time zone")
    await zone.fill("Asia/Tokyo")

    # Choosing Russian saves it to the account and the screen speaks Russian at once, the clock of a zone too.
    await page.get_by_role("combobox", name="Language").select_option(label="Русский")
    language = page.get_by_role("combobox", name="Язык")
    await expect(language).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("heading", name="Мой профиль")).to_be_visible()
    await expect(page.get_by_role("navigation", name="Настройки пользователя")).to_be_visible()
    await expect(page.get_by_text(re.compile(r"Там сейчас \d\d:\d\d\."))).to_be_visible()
    assert await page.evaluate("document.documentElement.lang") == "ru"
    user = (await client.get("/api/v1/users/@me", headers=freya.headers)).json()["user"]
    assert user["locale"] == "ru"
    # The unsaved time zone is still being edited; the profile is saved in Russian.
    await page.get_by_role("button", name="Сохранить профиль").click()
    await expect(page.get_by_role("status").filter(has_text="Профиль сохранён")).to_be_visible(timeout=WAIT)
    user = (await client.get("/api/v1/users/@me", headers=freya.headers)).json()["user"]
    assert (user["locale"], user["timezone"]) == ("ru", "Asia/Tokyo")
    await no_serious_violations(page, "profile in Russian")

    # A reload keeps Russian: it is the account's language.
    await page.reload()
    await expect(page.get_by_role("combobox", name="Язык")).to_have_value("ru", timeout=WAIT)
    assert await page.evaluate("document.documentElement.lang") == "ru"
    nav = page.get_by_role("navigation", name="Настройки пользователя")
    await nav.get_by_role("link", name="Устройства").click()
    await expect(page.get_by_role("heading", name="Устройства", exact=True)).to_be_visible(timeout=WAIT)
    await expect(page.get_by_text("Это устройство")).to_be_visible(timeout=WAIT)
    await nav.get_by_role("link", name="Мой профиль").click()

    # And back to English.
    await page.get_by_role("combobox", name="Язык").select_option(label="English")
    await expect(page.get_by_role("combobox", name="Language")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("heading", name="My profile")).to_be_visible()
    assert await page.evaluate("document.documentElement.lang") == "en"
    user = (await client.get("/api/v1/users/@me", headers=freya.headers)).json()["user"]
    assert user["locale"] == "en"

    assert only_expected(errors) == []
    await context.close()

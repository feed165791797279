"""A Russian-speaking newcomer (issue 36, "Done when"; docs/client.md, "Languages"): with a Russian browser
on a phone-sized screen they open an invitation, register, and meet the whole client in Russian: the page's
language, the accessible names of CLIENT.md in their Russian counterparts, Russian plurals (one, few, many)
and times in the account's own time zone, which follow the account when it changes. The app can be
installed from there (a manifest, a service worker, the install hint), and the English flow is untouched
(the other browser tests run in English)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

import pytest

from tests.support.browser import (
    ORIGIN,
    PASSWORD,
    needs_chromium,
    needs_client,
    serious_axe_violations,
    watch_errors,
)
from tests.support.guilds import make_guild, make_invite

pytestmark = [needs_chromium, needs_client]

WAIT = 10000
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN}


def shown_time(iso: str, zone: str) -> str:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(ZoneInfo(zone)).strftime("%H:%M")


async def test_a_russian_newcomer_registers_and_meets_the_client_in_russian(site, browser, client, accounts):
    from playwright.async_api import expect

    owner = await accounts.register("freya")
    guild = await make_guild(client, owner, "Долгая зима")
    room = guild["system_channel_id"]
    code = (await make_invite(client, owner, room))["code"]
    sent = await client.post(f"/api/v1/channels/{room}/messages", headers=owner.headers,
                             json={"content": "Добро пожаловать!"})
    assert sent.status_code in (200, 201), sent.text
    message = sent.json()["message"]

    context = await browser.new_context(locale="ru-RU", timezone_id="Asia/Yekaterinburg", service_workers="allow",
                                        **PHONE)
    page = await context.new_page()
    errors = watch_errors(page)

    # The invitation page of the service speaks Russian to a Russian browser.
    await page.goto(f"{site}/invite/{code}")
    assert await page.evaluate("document.documentElement.lang") == "ru"
    await page.get_by_role("link", name="Создать аккаунт").click()
    await page.wait_for_url(f"{site}/register?next=/invite/{code}", timeout=WAIT)
    assert await page.evaluate("document.documentElement.lang") == "ru"
    await page.get_by_role("textbox", name="Имя пользователя").fill("ilya")
    await page.get_by_role("textbox", name="Почта").fill("ilya@example.com")
    await page.get_by_label("Пароль").fill(PASSWORD)
    await page.get_by_role("button", name="Создать аккаунт").click()
    await page.wait_for_url(f"{site}/invite/{code}", timeout=WAIT)
    await page.get_by_role("button", name="Принять приглашение").click()
    await page.wait_for_url(f"{site}/channels/{guild['id']}/{room}", timeout=WAIT)

    # The account carries the browser's language and zone.
    cookies = {c["name"]: c["value"] for c in await context.cookies()}
    me = (await client.get("/api/v1/users/@me", cookies=cookies, headers={"Origin": ORIGIN})).json()["user"]
    assert me["locale"].lower().startswith("ru") and me["timezone"] == "Asia/Yekaterinburg", me

    # The room in Russian: the composer's name, the message log, the time in the account's zone.
    await expect(page.get_by_role("textbox", name="Написать в #general")).to_be_visible(timeout=WAIT)
    log = page.get_by_role("log", name="Сообщения")
    first = log.get_by_role("article").filter(has_text="Добро пожаловать!")
    await expect(first).to_contain_text(shown_time(message["created_at"], "Asia/Yekaterinburg"), timeout=WAIT)

    # Russian plurals on a reaction's name: 1 реакция, 2 реакции.
    reacted = await client.put(f"/api/v1/channels/{room}/messages/{message['id']}/reactions/{quote('👍')}",
                               headers=owner.headers)
    assert reacted.status_code == 204, reacted.text
    await expect(first.get_by_role("button", name="👍, 1 реакция")).to_be_visible(timeout=WAIT)
    await first.get_by_role("button", name="👍, 1 реакция").click()
    await expect(first.get_by_role("button", name="👍, 2 реакции")).to_be_visible(timeout=WAIT)

    # The account's zone decides, not the browser's: a change elsewhere moves the clock at once.
    changed = await client.patch("/api/v1/users/@me", cookies=cookies, headers={"Origin": ORIGIN},
                                 json={"timezone": "Asia/Vladivostok"})
    assert changed.status_code == 200, changed.text
    await expect(first).to_contain_text(shown_time(message["created_at"], "Asia/Vladivostok"), timeout=WAIT)

    # Installable from here: the manifest, a live service worker.
    assert await page.locator('link[rel="manifest"]').count() == 1
    assert await page.evaluate("navigator.serviceWorker.ready.then(r => !!r.active)") is True

    assert await serious_axe_violations(page) == []
    assert [e for e in errors if "401" not in e] == []
    await context.close()

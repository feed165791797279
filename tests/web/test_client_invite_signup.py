"""An invitation opened by someone without an account (docs/client.md, "Build and serving"): the public page
offers "Create an account" first, registration in the web client carries the invitation through, and the
new account lands back on the invitation page, accepts it and is in the server's room (OpenAPI: invitePage,
register, joinInvite)."""

from __future__ import annotations

from typing import Any

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


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the page and the client read through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN}


async def test_a_newcomer_registers_from_the_invitation_and_accepts_it(site, browser, client, accounts):
    from playwright.async_api import expect

    owner = await accounts.register("freya")
    guild = await make_guild(client, owner, "Long Winter")
    invite = await make_invite(client, owner, guild["system_channel_id"])
    code = invite["code"]

    context = await browser.new_context()
    page = await context.new_page()
    errors = watch_errors(page)
    await page.goto(f"{site}/invite/{code}")
    # Creating an account is offered first; signing in stays one link away.
    create = page.get_by_role("link", name="Create an account")
    await expect(create).to_be_visible()
    links = await page.get_by_role("link").all_inner_texts()
    assert links.index("Create an account") < links.index("Sign in to accept the invitation"), links
    assert await serious_axe_violations(page) == []

    await create.click()
    await page.wait_for_url(f"{site}/register?next=/invite/{code}", timeout=WAIT)
    await page.get_by_role("textbox", name="Username").fill("ingrid")
    await page.get_by_role("textbox", name="Email").fill("ingrid@example.com")
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Create account").click()

    # Back on the invitation, signed in now: accepting opens the room of the invitation in the client.
    await page.wait_for_url(f"{site}/invite/{code}", timeout=WAIT)
    await page.get_by_role("button", name="Accept invitation").click()
    await page.wait_for_url(f"{site}/channels/{guild['id']}/{guild['system_channel_id']}", timeout=WAIT)
    servers = page.get_by_role("navigation", name="Servers")
    await expect(servers.get_by_role("link", name="Long Winter")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("textbox", name="Message #general")).to_be_visible(timeout=WAIT)

    r = await client.get(f"/api/v1/guilds/{guild['id']}/members", headers=owner.headers)
    assert "ingrid" in [m["user"]["username"] for m in r.json()["members"]], r.text
    assert [e for e in errors if "401" not in e] == []  # the signed-out first visit asks /users/@me once
    await context.close()


async def test_the_sign_in_page_reached_from_the_invitation_offers_registration_with_it(site, browser, client,
                                                                                         accounts):
    owner = await accounts.register("freya")
    guild = await make_guild(client, owner, "Long Winter")
    code = (await make_invite(client, owner, guild["system_channel_id"]))["code"]

    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(f"{site}/invite/{code}")
    await page.get_by_role("link", name="Sign in to accept the invitation").click()
    await page.wait_for_url(f"{site}/login?next=/invite/{code}", timeout=WAIT)
    # Someone who followed "Sign in" without an account can still register without losing the invitation.
    link = page.get_by_role("link", name="Create an account")
    assert await link.get_attribute("href") == f"/register?next=%2Finvite%2F{code}"
    await context.close()

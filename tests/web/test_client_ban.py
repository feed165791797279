"""A ban that deletes recent messages, in a real headless Chromium (docs/moderation.md): the ban dialog offers
"Don't delete any" (chosen at first) and the last hour, 24 hours or 7 days; choosing the last hour removes the
banned person's messages of that hour from another member's open room live (MESSAGE_DELETE_BULK), and leaves the
older ones; no serious axe violation with the dialog open, in either theme and at 360 px."""

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
from tests.support.factories import add_member, audit_rows
from tests.support.guilds import make_guild
from tests.support.messages import post

pytestmark = [needs_chromium, needs_client]

WAIT = 10000
CHOICES = ["Don't delete any", "Delete messages from the last hour", "Delete messages from the last 24 hours",
           "Delete messages from the last 7 days"]


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"global": "100000/60", "messages.send": "100000/60"}}


async def open_ban_dialog(page: Any, name: str) -> Any:
    await page.get_by_role("button", name=f"Manage {name}", exact=True).click()
    manage = page.get_by_role("dialog", name=f"Manage {name}")
    await manage.get_by_role("button", name=f"Ban {name}", exact=True).click(timeout=WAIT)
    confirm = page.get_by_role("dialog", name=f"Ban {name}")
    await confirm.wait_for(timeout=WAIT)
    return confirm


async def test_a_ban_deleting_the_last_hour_removes_those_messages_live(site, browser, client, accounts, rt, clock):
    from playwright.async_api import expect

    freya, thor, sif = [await accounts.register(n) for n in ("freya", "thor", "sif")]
    guild = await make_guild(client, freya, "Longhouse")
    general = guild["system_channel_id"]
    for who in (thor, sif):
        await add_member(rt, guild["id"], who)
    await post(client, thor, general, "an old saga of mine")
    clock.advance(hours=2)
    await post(client, sif, general, "sif was here")
    await post(client, thor, general, "spam spam spam")
    await post(client, thor, general, "more spam")

    sif_ctx, sif_page, sif_errors = await open_page(browser, "sif", f"/channels/{guild['id']}/{general}")
    log = sif_page.get_by_role("log", name="Messages")
    await expect(log.get_by_role("article").filter(has_text="more spam")).to_be_visible(timeout=WAIT)

    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/members")
    confirm = await open_ban_dialog(page, "thor")
    history = confirm.get_by_role("group", name="Delete message history")
    await expect(history.get_by_role("radio")).to_have_count(4)
    for label in CHOICES:
        await expect(history.get_by_role("radio", name=label, exact=True)).to_be_visible()
    await expect(history.get_by_role("radio", name="Don't delete any")).to_be_checked()
    await history.get_by_role("radio", name="Delete messages from the last hour").check()
    assert await serious_axe_violations(page) == []
    await confirm.get_by_role("button", name="Ban", exact=True).click()
    await expect(page.get_by_role("status").filter(has_text="thor was banned. Their recent messages were deleted.")
                 ).to_be_visible(timeout=WAIT)

    # Sif's open room loses thor's last hour at once; his older message and hers stay.
    await expect(log.get_by_role("article").filter(has_text="spam")).to_have_count(0, timeout=WAIT)
    await expect(log.get_by_role("article").filter(has_text="an old saga of mine")).to_be_visible()
    await expect(log.get_by_role("article").filter(has_text="sif was here")).to_be_visible()
    [entry] = await audit_rows(rt, guild["id"], "member.ban")
    assert entry["data"]["deleted_messages"] == 2
    for errs in (errors, sif_errors):
        assert only_expected(errs) == []
    await ctx.close()
    await sif_ctx.close()


@pytest.mark.parametrize("scheme", ["dark", "light"])
async def test_the_ban_dialog_has_no_serious_axe_violation_on_a_phone(site, browser, client, accounts, rt, scheme):
    freya, thor = await accounts.register("freya"), await accounts.register("thor")
    guild = await make_guild(client, freya, "Longhouse")
    await add_member(rt, guild["id"], thor)
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/members",
                                        color_scheme=scheme, viewport={"width": 360, "height": 740})
    confirm = await open_ban_dialog(page, "thor")
    await confirm.get_by_role("radio", name="Delete messages from the last 7 days").check()
    assert await serious_axe_violations(page) == [], scheme
    assert only_expected(errors) == []
    await ctx.close()

"""The welcome card of a new account does not move the screen (docs/client.md, "Onboarding"): it is there
from the first frame of the signed-in layout, so the message list's top, once shown, stays where it is when
the card has appeared and after (it used to arrive a second later and push everything 62 px down)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.browser import ORIGIN, needs_chromium, needs_client, open_page
from tests.support.guilds import make_guild

pytestmark = [needs_chromium, needs_client]

WAIT = 10000

# Every animation frame from the first one, the message list's top (once there is a list) and whether the
# card is there: a change of the top after the list appeared is a layout shift. Run before any script of the
# page, through the browser's debugging protocol (the page's CSP does not govern it).
RECORDER = """
window.__tops = [];
const frame = () => {
  const log = document.querySelector('[role="log"]');
  if (log) {
    const card = !!document.querySelector('#welcome-title');
    window.__tops.push([Math.round(log.getBoundingClientRect().top), card]);
  }
  requestAnimationFrame(frame);
};
requestAnimationFrame(frame);
"""


@pytest.fixture
def backend() -> str:
    return "sqlite"  # layout only


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN}


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, {"width": 360, "height": 740}],
                         ids=["desktop", "phone"])
async def test_the_message_list_does_not_move_when_the_welcome_card_appears(site, browser, client, accounts,
                                                                            viewport):
    from playwright.async_api import expect

    freya = await accounts.register("freya")  # a new account: onboarding not completed
    guild = await make_guild(client, freya, "Long Winter")
    path = f"/channels/{guild['id']}/{guild['system_channel_id']}"
    context, page, errors = await open_page(browser, "freya", "/healthz", viewport=viewport)
    await page.add_init_script(RECORDER)
    await page.goto(f"{ORIGIN}{path}")
    await expect(page.get_by_role("region", name=re.compile("Welcome to Meadhall"))).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("log", name="Messages")).to_be_visible()
    # A further sixty frames (about a second) with both on screen, counted by the recorder itself.
    await page.evaluate("""() => new Promise((done) => {
      const more = () => (window.__tops.filter(([, card]) => card).length > 60 ? done() : requestAnimationFrame(more));
      more();
    })""")
    tops = await page.evaluate("window.__tops")
    assert tops and tops[0][1], "the list was drawn before the card was there"
    assert {top for top, _card in tops} == {tops[0][0]}, tops
    assert errors == []
    await context.close()

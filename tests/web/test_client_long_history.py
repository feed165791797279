"""A room of 10,000 messages in the web client (docs/client.md, "History"): the client loads history by
cursor as the reader scrolls up, never all at once, and the list is virtualised, so the number of
DOM nodes stays bounded however far one scrolls."""

from __future__ import annotations

import re
import time
from datetime import timedelta
from typing import Any

import pytest

from meadhall.db.schema.messages import messages
from tests.support.browser import ORIGIN, PASSWORD, chromium, needs_chromium, needs_client, signed_in_context

pytestmark = [needs_chromium, needs_client]

COUNT = 10_000


@pytest.fixture
def backend() -> str:
    return "sqlite"


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"global": "100000/60"}}



async def fill_room(rt: Any, guild_id: str, room: str, author: str) -> None:
    start = rt.clock.now() - timedelta(days=3)
    rows = [{"id": rt.ids.next(), "channel_id": int(room), "guild_id": int(guild_id), "author_id": int(author),
             "content": f"saga line {i}", "content_norm": f"saga line {i}", "kind": "normal", "mentions": [],
             "mention_channels": [], "mention_everyone": False, "suppress_embeds": False, "pinned": False,
             "created_at": start + timedelta(seconds=20 * i)} for i in range(COUNT)]
    async with rt.engine.begin() as conn:
        for at in range(0, COUNT, 1000):
            await conn.execute(messages.insert(), rows[at:at + 1000])


async def test_ten_thousand_messages_keep_the_dom_bounded(site, client, accounts, rt):
    from playwright.async_api import expect

    skald = await accounts.register("skald")
    r = await client.post("/api/v1/guilds", json={"name": "Sagas"}, headers=skald.headers)
    guild = r.json()["guild"]
    room = guild["system_channel_id"]
    await fill_room(rt, guild["id"], room, skald.id)

    async with chromium() as browser:
        context = await signed_in_context(browser, ORIGIN, "skald", PASSWORD, viewport={"width": 1280, "height": 800})
        page = await context.new_page()
        pages: list[str] = []
        page.on("request", lambda req: pages.append(req.url) if "/messages" in req.url else None)
        await page.goto(f"{site}/channels/{guild['id']}/{room}")
        log = page.get_by_role("log", name="Messages")
        await expect(log.get_by_role("article").filter(has_text="saga line 9999")).to_be_visible(timeout=10000)

        counts = []
        first = log.get_by_role("article").filter(has_text=re.compile(r"saga line 0(?!\d)"))
        # Scroll to the top again and again, end to end: each time the page before is fetched by cursor,
        # until the room's first message shows. Bounded by time, not by a count of scrolls: on a loaded
        # machine (the whole suite on two cores) a page may take longer than one 60 ms pause.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            await log.evaluate("el => el.scrollTop = 0")
            await page.wait_for_timeout(60)
            counts.append(await page.evaluate("document.querySelectorAll('*').length"))
            if await first.count():
                break
        await expect(first).to_be_visible(timeout=5000)
        articles = await log.get_by_role("article").count()
        loaded = len([u for u in pages if "before=" in u])

        assert loaded >= COUNT // 50 - 1, len(pages)  # the whole room came page by page, by cursor
        assert all("limit=50" in u for u in pages)
        assert articles < 120, articles  # only the rows near the viewport exist
        assert max(counts) < 3000, counts  # bounded: it does not grow with what was loaded
        assert max(counts[-10:]) <= max(counts[:10]) * 1.5, counts
        await context.close()

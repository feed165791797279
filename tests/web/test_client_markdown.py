"""Markdown in messages as Discord writes it, in a real headless Chromium (docs/client.md, "Markdown"): block
quotes, headings, lists, underline, spoilers hidden until clicked or pressed, masked links that show their
address, code blocks highlighted by a grammar fetched only when one is shown, markup kept as text, "(edited)"
apart from the words; no serious accessibility violation in either theme."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.browser import (
    CLIENT_INDEX,
    needs_chromium,
    needs_client,
    serious_axe_violations,
    show_scheme,
    watch_errors,
)
from tests.support.chat import SETTINGS, WAIT, article, hall, open_room, post

pytestmark = [needs_chromium, needs_client]

SAGA = "\n".join([
    "# The Saga",
    "> the ice",
    "> was old",
    "- mead",
    "- ale",
    "1. first",
    "2. second",
    "__under__ and ||Thor wins|| and [the saga](https://example.com/saga_(book)) and [x](javascript:alert(1))",
    "```python",
    "def skal():",
    "    return 1",
    "```",
    "<img src=x onerror=alert(1)>",
])


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return SETTINGS


async def test_markdown_renders_as_discord_writes_it(site, browser, client, accounts):
    from playwright.async_api import expect

    freya, thor, guild, room = await hall(client, accounts)
    await post(client, thor, room, SAGA)
    edited_id = await post(client, thor, room, ">>> all of this\n- quoted too\nthe blade is ||sharp||")

    context, page = await open_room(browser, "freya", guild, room)
    errors = watch_errors(page)
    grammars: list[str] = []
    page.on("request", lambda req: grammars.append(req.url) if re.search(r"/assets/(core|python)-", req.url) else None)
    await page.reload()
    saga = article(page, "The Saga")
    await expect(saga.get_by_role("heading", name="The Saga")).to_be_visible(timeout=WAIT)
    await expect(saga.locator("blockquote")).to_have_text("the ice\nwas old")
    lists = saga.get_by_role("list")
    await expect(lists).to_have_count(2)
    await expect(lists.first.get_by_role("listitem")).to_have_text(["mead", "ale"])
    await expect(lists.nth(1).get_by_role("listitem")).to_have_text(["first", "second"])
    await expect(saga.locator("u")).to_have_text("under")

    # A masked link says where it goes; only http(s) addresses become links.
    link = saga.get_by_role("link", name="the saga")
    await expect(link).to_have_attribute("href", "https://example.com/saga_(book)")
    await expect(link).to_have_attribute("title", "https://example.com/saga_(book)")
    await expect(saga.get_by_role("link")).to_have_count(1)
    await expect(saga).to_contain_text("[x](javascript:alert(1))")

    # Markup in content is text, never an element.
    await expect(saga).to_contain_text("<img src=x onerror=alert(1)>")
    await expect(saga.locator(".content img")).to_have_count(0)

    # Code is highlighted once its grammar arrived, fetched on demand (not part of the first download).
    await expect(saga.locator("pre .hljs-keyword").first).to_have_text("def", timeout=WAIT)
    await expect(saga.locator("pre")).to_have_text("def skal():\n    return 1\n")
    assert any("/assets/python-" in u for u in grammars) and any("/assets/core-" in u for u in grammars), grammars
    index = CLIENT_INDEX.read_text(encoding="utf-8")
    assert "python-" not in index and "core-" not in index

    # A spoiler is hidden until clicked; its words are not read out meanwhile.
    spoiler = saga.get_by_role("button", name="Spoiler, reveal")
    await expect(saga.get_by_text("Thor wins")).to_be_hidden()
    await spoiler.click()
    await expect(saga.get_by_text("Thor wins")).to_be_visible()
    await expect(saga.get_by_role("button", name="Spoiler, reveal")).to_have_count(0)

    # `>>> ` quotes to the end, lists included; a spoiler opens from the keyboard too.
    quoted = article(page, "all of this")
    await expect(quoted.locator("blockquote")).to_contain_text("all of this")
    await expect(quoted.locator("blockquote").get_by_role("listitem")).to_have_text("quoted too")
    hidden = quoted.get_by_role("button", name="Spoiler, reveal")
    await hidden.focus()
    await page.keyboard.press("Enter")
    await expect(quoted.get_by_text("sharp", exact=True)).to_be_visible()

    # "(edited)" stands apart from the words.
    r = await client.patch(f"/api/v1/channels/{room}/messages/{edited_id}", json={"content": "the blade is sharp)"},
                           headers=thor.headers)
    assert r.status_code == 200, r.text
    await expect(article(page, "the blade is sharp)")).to_contain_text("the blade is sharp) (edited)", timeout=WAIT)

    for scheme in ("dark", "light"):
        await show_scheme(page, scheme)
        assert await serious_axe_violations(page) == [], scheme
    assert errors == []
    await context.close()

"""Link-preview tests: a canary on 127.0.0.1 that must never be reached, and a page server on 127.0.0.2, the one
address OUTBOUND_ALLOWED_NETWORKS lets through."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.support.outbound import ALLOWED, Canary, Site, confine, html, redirect

PAGE = """<!doctype html><html><head><title>Plain title</title>
<meta property="og:title" content="The Mead Hall">
<meta property="og:description" content="Where the long tables are.">
<meta property="og:site_name" content="Hall Weekly">
<meta property="og:image" content="/images/hall.png">
<meta name="twitter:title" content="Twitter title">
<meta name="description" content="Meta description">
</head><body>hello</body></html>"""


@pytest.fixture
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The page server's address allowed; a test may add settings (indirect parametrisation)."""
    return {"OUTBOUND_ALLOWED_NETWORKS": ALLOWED, **getattr(request, "param", {})}


@pytest.fixture
async def canary() -> AsyncIterator[Canary]:
    c = Canary()
    await c.start()
    try:
        yield c
    finally:
        await c.stop()


@pytest.fixture
async def pages(canary: Canary) -> AsyncIterator[Site]:
    site = Site({
        "/page": html(PAGE),
        "/to-canary": redirect(lambda: f"http://127.0.0.1:{canary.port}/"),
        "/to-canary-by-name": redirect(lambda: f"http://canary.test:{canary.port}/"),
        "/to-canary-decimal": redirect(lambda: f"http://2130706433:{canary.port}/"),
        "/to-ftp": redirect("ftp://127.0.0.2/"),
        "/to-page": redirect("/page", status=301),
    })
    await site.start()
    try:
        yield site
    finally:
        await site.stop()


@pytest.fixture
def names(rt: Any) -> dict[str, list[str]]:
    """Names the test resolver knows: one for the canary, one for the page server, one for both."""
    return confine(rt.outbound, {"canary.test": ["127.0.0.1"], "page.test": ["127.0.0.2"],
                                 "both.test": ["127.0.0.2", "127.0.0.1"], "v6.test": ["::1"]})

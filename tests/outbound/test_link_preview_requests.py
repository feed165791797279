"""Link previews (docs/outbound.md; OpenAPI: getLinkPreview), the request around the card: a page that arrives
in many small pieces is read until its end or 512 KB, the rate-limit headers name the `link_previews` bucket a
fetch takes, and a URL that cannot be read (a host that is neither a name nor an address, a control
character) answers 422 rather than `blocked`, on every database."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from tests.support.http import invalid
from tests.support.outbound import Site, link_preview

PIECE = 16 * 1024


def trickled(head_bytes: int) -> web.StreamResponse:
    """A page whose `<title>` comes after `head_bytes` of head, sent in 16 KB pieces a few milliseconds apart
    (so that no single network read holds more than a piece)."""
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
        await response.prepare(request)
        await response.write(b"<!doctype html><html><head>")
        pad = b"<!-- " + b"x" * (head_bytes - 10) + b" -->"
        for at in range(0, len(pad), PIECE):
            await response.write(pad[at:at + PIECE])
            await asyncio.sleep(0.005)
        await response.write(b"<title>Far down the head</title></head><body>hi</body></html>")
        await response.write_eof()
        return response
    return handler  # type: ignore[return-value]


@pytest.fixture
async def site(rt):
    async with Site({"/deep-title": trickled(480 * 1024), "/too-deep-title": trickled(600 * 1024),
                     "/plain": trickled(0)}) as s:
        yield s


async def test_a_title_after_480_kb_of_head_sent_in_small_pieces_makes_a_card(api, accounts, site):
    alice = await accounts.register("alice")

    body = await link_preview(api, alice, site.url("/deep-title"))

    assert body["status"] == "ok", body
    assert body["card"]["title"] == "Far down the head"


async def test_a_title_after_600_kb_of_head_is_past_the_512_kb_read(api, accounts, site):
    alice = await accounts.register("alice")

    body = await link_preview(api, alice, site.url("/too-deep-title"))

    assert body["status"] == "empty", body
    assert body["card"] is None


async def test_a_fetch_reports_the_link_previews_bucket_in_its_rate_limit_headers(api, accounts, site):
    alice = await accounts.register("alice")

    first = await api.request("GET", "/link-previews", alice, params={"url": site.url("/plain?n=1")}, expect=200)
    second = await api.request("GET", "/link-previews", alice, params={"url": site.url("/plain?n=2")}, expect=200)

    assert first.headers["X-RateLimit-Bucket"] == "link_previews"
    assert first.headers["X-RateLimit-Limit"] == "20"
    assert [int(r.headers["X-RateLimit-Remaining"]) for r in (first, second)] == [19, 18]


@pytest.mark.parametrize("url", ["http://[zz::1]/", "https://[zz::1]:8080/page", "http://[::1::2]/",
                                 "http://1.2.3.256/", "http://exa mple.com/", "http://%zz/"])
async def test_a_host_that_is_neither_a_name_nor_an_address_answers_422(api, accounts, url):
    alice = await accounts.register("alice")

    r = await api.request("GET", "/link-previews", alice, params={"url": url}, expect=None)

    invalid(r, "url")


@pytest.mark.parametrize("url", ["http://a\x00b.example/", "http://example.com/\x00", "ftp://a\x00b/",
                                 "http://example.com/\x07", "http://example.com/a\nb"],
                         ids=["nul in host", "nul in path", "nul in refused url", "bel", "line feed"])
async def test_control_characters_in_the_url_answer_422(api, accounts, url):
    alice = await accounts.register("alice")

    r = await api.request("GET", "/link-previews", alice, params={"url": url}, expect=None)

    invalid(r, "url")
    again = await api.request("GET", "/link-previews", alice, params={"url": "http://127.0.0.1:9/"}, expect=200)
    assert again.json()["status"] == "blocked"  # the database connection is still usable afterwards

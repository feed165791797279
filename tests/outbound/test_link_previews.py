"""Link previews (docs/outbound.md; OpenAPI: getLinkPreview): the card's sources in order, the statuses, the
database cache and its lives, the `link_previews` bucket (cached answers free), the switch, and one cache
shared by two service instances on one database."""

from __future__ import annotations

import asyncio
from datetime import datetime

import httpx
import pytest
from aiohttp import web

from meadhall.app import create_app
from meadhall.core import limits
from meadhall.runtime import Runtime
from tests.support.http import Api, assert_error, invalid
from tests.support.outbound import Site, confine, html, link_preview, redirect
from tests.support.personas import Accounts

PAD = "<!-- " + "x" * 600_000 + " -->"


async def slow(_request):
    await asyncio.sleep(3)
    return web.Response(text="<title>late</title>", content_type="text/html")


ROUTES = {
    "/twitter": html('<head><title>T</title><meta name="twitter:title" content="Tweet title">'
                     '<meta name="twitter:description" content="Tweet text">'
                     '<meta name="twitter:image" content="https://page.test/t.png"></head>'),
    "/plain-html": html('<head><title>  Just a\n title </title><meta name="description" content="Described">'
                        '</head>'),
    "/no-metadata": html("<p>nothing to say</p>"),
    "/text": html("<title>not html</title>", content_type="text/plain"),
    "/json": html('{"title": "x"}', content_type="application/json"),
    "/broken": html("<title>oops</title>", status=500),
    "/gone": html("<title>gone</title>", status=404),
    "/image-inside": html('<title>I</title><meta property="og:image" content="http://127.0.0.1/secret.png">'),
    "/image-metadata": html('<title>I</title><meta property="og:image" content="http://169.254.169.254/x.png">'),
    "/image-other-scheme": html('<title>I</title><meta property="og:image" content="javascript:alert(1)">'),
    "/image-localhost": html('<title>I</title><meta property="og:image" content="http://localhost/x.png">'),
    "/image-name-inside": html('<title>I</title><meta property="og:image" content="http://canary.test/x.png">'),
    "/image-unknown-name": html('<title>I</title><meta property="og:image" content="http://nowhere.test/x.png">'),
    "/big": html(f"<head><title>Head title</title></head>{PAD}<meta property=\"og:title\" content=\"Too far\">"),
    "/latin1": web.Response,  # replaced below
    "/r1": redirect("/r2"), "/r2": redirect("/r3"), "/r3": redirect("/plain-html"),
    "/r0": redirect("/r1"),
    "/slow": slow,
}


async def latin1(_request):
    return web.Response(body="<title>Caf\xe9 \xe0 la carte</title>".encode("latin-1"),
                        headers={"Content-Type": "text/html; charset=iso-8859-1"})

ROUTES["/latin1"] = latin1


@pytest.fixture
async def site(rt):
    async with Site(dict(ROUTES)) as s:
        yield s


def lifetime(body) -> float:
    parse = lambda v: datetime.fromisoformat(v.replace("Z", "+00:00"))  # noqa: E731
    return (parse(body["expires_at"]) - parse(body["fetched_at"])).total_seconds()


async def test_twitter_card_then_title_and_description(api, accounts, site, names):
    alice = await accounts.register("alice")

    tweet = await link_preview(api, alice, site.url("/twitter"))
    plain = await link_preview(api, alice, site.url("/plain-html"))
    latin = await link_preview(api, alice, site.url("/latin1"))

    assert tweet["card"] == {"title": "Tweet title", "description": "Tweet text", "site_name": None,
                             "image_url": "https://page.test/t.png"}
    assert plain["card"] == {"title": "Just a title", "description": "Described", "site_name": None,
                             "image_url": None}
    assert latin["card"]["title"] == "Café à la carte"


@pytest.mark.parametrize(("path", "status"), [
    ("/no-metadata", "empty"), ("/text", "empty"), ("/json", "empty"), ("/broken", "error"), ("/gone", "error"),
    ("/r0", "error"),  # four redirects: one too many
    ("/r1", "ok"),  # three redirects
])
async def test_statuses(api, accounts, site, path, status):
    alice = await accounts.register("alice")

    body = await link_preview(api, alice, site.url(path))

    assert body["status"] == status
    assert (body["card"] is not None) == (status == "ok")


async def test_a_fetch_that_takes_too_long_is_an_error(api, accounts, site, monkeypatch):
    monkeypatch.setattr(limits, "LINK_PREVIEW_SECONDS", 0.5)
    alice = await accounts.register("alice")

    started = asyncio.get_running_loop().time()
    body = await link_preview(api, alice, site.url("/slow"))

    assert body["status"] == "error"
    assert asyncio.get_running_loop().time() - started < 2.5


async def test_only_the_first_512_kb_are_read(api, accounts, site):
    alice = await accounts.register("alice")

    body = await link_preview(api, alice, site.url("/big"))

    assert body["card"]["title"] == "Head title"  # the og:title past 512 KB was never read


@pytest.mark.parametrize("path", ["/image-inside", "/image-metadata", "/image-other-scheme", "/image-localhost",
                                  "/image-name-inside", "/image-unknown-name"])
async def test_an_image_url_the_guard_refuses_is_left_out_and_never_fetched(api, accounts, site, names, canary, path):
    alice = await accounts.register("alice")

    body = await link_preview(api, alice, site.url(path))

    assert body["status"] == "ok" and body["card"]["image_url"] is None
    assert site.paths() == [path]
    assert canary.connections == 0


async def test_answers_are_cached_for_their_lives(api, accounts, site, clock):
    alice = await accounts.register("alice")
    ok = await link_preview(api, alice, site.url("/plain-html"))
    empty = await link_preview(api, alice, site.url("/text"))
    error = await link_preview(api, alice, site.url("/broken"))
    blocked = await link_preview(api, alice, "http://127.0.0.1:9/")
    assert [lifetime(b) for b in (ok, empty, error, blocked)] == [86_400, 3_600, 600, 3_600]

    again = [await link_preview(api, alice, site.url(p)) for p in ("/plain-html", "/text", "/broken")]
    assert again == [ok, empty, error]
    assert len(site.requests) == 3

    clock.advance(minutes=11)  # the error is fetched again, the others are still cached
    await link_preview(api, alice, site.url("/broken"))
    await link_preview(api, alice, site.url("/text"))
    assert site.paths() == ["/plain-html", "/text", "/broken", "/broken"]

    clock.advance(days=1)
    refreshed = await link_preview(api, alice, site.url("/plain-html"))
    assert site.paths()[-1] == "/plain-html" and refreshed["fetched_at"] != ok["fetched_at"]


async def test_twenty_new_fetches_a_minute_and_cached_answers_are_free(api, accounts, site, clock):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    for i in range(20):
        await link_preview(api, alice, site.url(f"/plain-html?n={i}"))

    r = await api.request("GET", "/link-previews", alice, params={"url": site.url("/plain-html?n=20")}, expect=None)
    assert_error(r, 429, "rate_limited")
    assert r.json()["error"]["bucket"] == "link_previews"
    cached = await link_preview(api, alice, site.url("/plain-html?n=3"))  # free
    assert cached["status"] == "ok"
    await link_preview(api, bob, site.url("/plain-html?n=20"))  # per user; and now cached for alice too
    await link_preview(api, alice, site.url("/plain-html?n=20"))
    assert len(site.requests) == 21

    clock.advance(seconds=3)
    await link_preview(api, alice, site.url("/plain-html?n=21"))


@pytest.mark.parametrize("url", ["not a url", "/relative/path", "//example.com/no-scheme", "http://", "https:///x"])
async def test_what_is_not_an_absolute_url_answers_422(api, accounts, url):
    alice = await accounts.register("alice")

    r = await api.request("GET", "/link-previews", alice, params={"url": url}, expect=None)

    invalid(r, "url")


async def test_a_url_over_2048_characters_answers_422(api, accounts):
    alice = await accounts.register("alice")

    r = await api.request("GET", "/link-previews", alice, params={"url": "http://example.com/" + "a" * 2030}, expect=None)

    assert r.status_code == 422


@pytest.mark.parametrize("settings_overrides", [{"UNFURL_ENABLED": False}], indirect=True)
async def test_previews_can_be_turned_off(api, accounts, site):
    alice = await accounts.register("alice")

    r = await api.request("GET", "/link-previews", alice, params={"url": site.url("/plain-html")}, expect=None)

    assert_error(r, 403, "link_preview.disabled")
    assert site.requests == []
    meta = await api.get("/meta", alice)
    assert meta["features"]["unfurl_enabled"] is False


async def test_two_service_instances_share_the_cache(api, accounts, site, settings, clock, rt):
    alice = await accounts.register("alice")
    other = Runtime(settings, clock=clock, redis_prefix=rt.redis_prefix)
    confine(other.outbound)
    await other.start(run_migrations=False)
    try:
        app = create_app(settings, other)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as c:
            first = await link_preview(api, alice, site.url("/plain-html"))
            second = await link_preview(Api(c), alice, site.url("/plain-html"))
            bob = await Accounts(c).register("bob")
            third = await link_preview(Api(c), bob, site.url("/twitter"))
            fourth = await link_preview(api, alice, site.url("/twitter"))
    finally:
        await other.close()

    assert second == first and fourth == third
    assert site.paths() == ["/plain-html", "/twitter"]

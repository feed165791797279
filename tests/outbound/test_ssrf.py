"""The SSRF corpus (docs/outbound.md): every disguised form of the canary's loopback address answers `blocked`
and the canary on 127.0.0.1 sees no connection at all, while the page server on 127.0.0.2, which
OUTBOUND_ALLOWED_NETWORKS lets through, gives an `ok` card."""

from __future__ import annotations

import pytest

from tests.support.outbound import PAGE_HOST, link_preview

DISGUISES = [
    "http://127.0.0.1:{port}/",
    "http://2130706433:{port}/",  # decimal
    "http://0x7f000001:{port}/",  # hex
    "http://0x7f.0.0.1:{port}/",
    "http://0177.0.0.1:{port}/",  # octal
    "http://127.1:{port}/",  # short
    "http://127.0.1:{port}/",
    "http://127.0.0.1.:{port}/",  # trailing dot
    "http://localhost:{port}/",
    "http://LOCALHOST.:{port}/",
    "http://[::1]:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",  # IPv4-mapped
    "http://[::ffff:7f00:1]:{port}/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]:{port}/",
    "http://canary.test:{port}/",  # a DNS name resolving to it
    "http://both.test:{port}/",  # a name with one allowed and one refused address
    "http://v6.test:{port}/",
    "http://user:pw@127.0.0.2:{page_port}/page",  # userinfo, even for the allowed host
    "http://127.0.0.2:{page_port}@127.0.0.1:{port}/",
    "ftp://127.0.0.1:{port}/",  # other schemes
    "gopher://127.0.0.1:{port}/_GET%20/",
    "file:///etc/passwd",
    "ws://127.0.0.1:{port}/",
    "http://{page}:{page_port}/to-canary",  # a redirect from an allowed page to it
    "http://{page}:{page_port}/to-canary-by-name",
    "http://{page}:{page_port}/to-canary-decimal",
    "http://{page}:{page_port}/to-ftp",
]


@pytest.mark.parametrize("template", DISGUISES)
async def test_disguised_loopback_is_blocked_and_never_connected(api, accounts, canary, pages, names, template):
    alice = await accounts.register("alice")
    url = template.format(port=canary.port, page=PAGE_HOST, page_port=pages.port)

    body = await link_preview(api, alice, url)

    assert body["status"] == "blocked", body
    assert body["card"] is None
    assert canary.connections == 0


async def test_the_allowed_page_server_gives_an_ok_card(api, accounts, canary, pages, names):
    alice = await accounts.register("alice")

    body = await link_preview(api, alice, f"http://{PAGE_HOST}:{pages.port}/page#top")

    assert body["status"] == "ok"
    assert body["url"] == f"http://{PAGE_HOST}:{pages.port}/page"
    assert body["card"] == {"title": "The Mead Hall", "description": "Where the long tables are.",
                            "site_name": "Hall Weekly", "image_url": f"http://{PAGE_HOST}:{pages.port}/images/hall.png"}
    assert pages.paths() == ["/page"]  # the image was checked, never downloaded
    assert canary.connections == 0


async def test_a_name_resolving_to_the_allowed_server_and_a_redirect_within_it_are_followed(api, accounts, canary,
                                                                                          pages, names):
    alice = await accounts.register("alice")

    by_name = await link_preview(api, alice, f"http://page.test:{pages.port}/page")
    redirected = await link_preview(api, alice, f"http://0x7f.0.0.2:{pages.port}/to-page")

    assert by_name["status"] == "ok" and redirected["status"] == "ok"
    assert redirected["url"] == f"http://{PAGE_HOST}:{pages.port}/to-page"  # the hex host, normalised
    assert pages.paths() == ["/page", "/to-page", "/page"]
    assert canary.connections == 0

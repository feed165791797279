"""The installable app over HTTP (docs/client.md, "The installable app"): the web app manifest named after the
main server, its icons served as real PNGs of their sizes, the page's manifest link and metas, and the service
worker served uncached with its shell list written by the build."""

from __future__ import annotations

import json
import re
import struct
from typing import Any

from sqlalchemy import update

from meadhall.db.schema import guilds
from meadhall.web.pages import short_name
from tests.support.browser import needs_client
from tests.support.guilds import make_guild

PNG = b"\x89PNG\r\n\x1a\n"


def png_size(body: bytes) -> tuple[int, int]:
    assert body[:8] == PNG and body[12:16] == b"IHDR", body[:16]
    width, height = struct.unpack(">II", body[16:24])
    return width, height


async def test_the_manifest_names_the_public_main_server_else_meadhall(client, accounts, rt):
    r = await client.get("/manifest.webmanifest")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/manifest+json"
    assert r.headers["cache-control"] == "no-cache" and r.headers["x-content-type-options"] == "nosniff"
    manifest = r.json()
    assert manifest["name"] == manifest["short_name"] == "Meadhall"
    assert {k: manifest[k] for k in ("start_url", "scope", "display", "theme_color", "background_color")} == {
        "start_url": "/", "scope": "/", "display": "standalone", "theme_color": "#1f2229",
        "background_color": "#1f2229"}
    assert [(i["src"], i["sizes"], i["type"], i["purpose"]) for i in manifest["icons"]] == [
        ("/icons/icon-192.png", "192x192", "image/png", "any"),
        ("/icons/icon-512.png", "512x512", "image/png", "any"),
        ("/icons/icon-maskable-512.png", "512x512", "image/png", "maskable"),
        ("/icons/icon.svg", "any", "image/svg+xml", "any")]

    owner = await accounts.register("owner")
    guild = await make_guild(client, owner, "Медовый зал северных земель")
    async with rt.engine.begin() as conn:
        await conn.execute(update(guilds).where(guilds.c.id == int(guild["id"])).values(is_main=True))
    # The manifest is read without signing in: a private main server's name is not published.
    assert (await client.get("/manifest.webmanifest")).json()["name"] == "Meadhall"
    async with rt.engine.begin() as conn:
        await conn.execute(update(guilds).where(guilds.c.id == int(guild["id"])).values(public=True))
    manifest = json.loads((await client.get("/manifest.webmanifest")).content.decode("utf-8"))
    assert manifest["name"] == "Медовый зал северных земель"
    assert manifest["short_name"] == "Медовый зал"


def test_the_short_name_keeps_whole_words_within_twelve_characters():
    assert short_name("Meadhall") == "Meadhall"
    assert short_name("The Great Mead Hall") == "The Great"
    assert short_name("Supercalifragilistic") == "Supercalifra"
    assert all(len(short_name(n)) <= 12 for n in ("a" * 40, "ab " * 10, "Twelve chars", "Thirteen char"))


@needs_client
async def test_the_icons_are_pngs_of_their_sizes(client):
    for name, size in (("icon-192.png", 192), ("icon-512.png", 512), ("icon-maskable-512.png", 512),
                       ("apple-touch-icon.png", 180)):
        r = await client.get(f"/icons/{name}")
        assert r.status_code == 200, name
        assert r.headers["content-type"] == "image/png"
        assert png_size(r.content) == (size, size), name
    svg = await client.get("/icons/icon.svg")
    assert svg.headers["content-type"] == "image/svg+xml" and svg.text.startswith("<svg")
    for name in ("../index.html", "nope.png", "icon-192.gif"):
        assert (await client.get(f"/icons/{name}")).status_code == 404


@needs_client
async def test_the_page_links_the_manifest_and_the_phone_metas(client: Any):
    page = (await client.get("/")).text
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page
    assert '<meta name="theme-color" media="(prefers-color-scheme: dark)" content="#1f2229">' in page
    assert '<meta name="theme-color" media="(prefers-color-scheme: light)" content="#ffffff">' in page
    assert '<link rel="apple-touch-icon" sizes="180x180" href="/icons/apple-touch-icon.png">' in page
    for meta in ("mobile-web-app-capable", "apple-mobile-web-app-capable", "apple-mobile-web-app-status-bar-style",
                 "apple-mobile-web-app-title"):
        assert f'<meta name="{meta}"' in page, meta
    viewport = re.search(r'<meta name="viewport" content="([^"]+)">', page)
    assert viewport and {"viewport-fit=cover", "interactive-widget=resizes-content"} <= {
        p.strip() for p in viewport.group(1).split(",")}


@needs_client
async def test_the_service_worker_is_served_uncached_with_the_shell_list_of_the_build(client):
    r = await client.get("/sw.js")
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/javascript; charset=utf-8"
    assert r.headers["cache-control"] == "no-cache" and r.headers["x-content-type-options"] == "nosniff"
    found = re.search(r"^const BUILD = (\{.*\}); // meadhall-shell:", r.text, re.M)
    assert found, "the build did not write the shell list"
    build = json.loads(found.group(1))
    assert re.fullmatch(r"[0-9a-f]{12}", build["version"])
    assets = [f for f in build["files"] if f.startswith("/assets/")]
    page = (await client.get("/")).text
    entry = re.search(r'<script type="module" crossorigin src="(/assets/[^"]+)"', page)
    assert entry and entry.group(1) in assets
    # Every language's first-frame words are kept (an offline start after an update needs its own); what
    # loads on demand is kept when the page loads it: neither the screens' words nor the media client.
    assert {m.group(1) for f in assets if (m := re.fullmatch(r"/assets/(en|ru)-[\w-]{8}\.js", f))} == {"en", "ru"}
    assert not any(re.fullmatch(r"/assets/(en|ru)-screens-[\w-]+\.js", f) or "livekit" in f for f in assets), assets
    for path in build["files"]:
        assert (await client.get(path)).status_code == 200, path
    # What is never cached, and the push handlers kept.
    for never in ('"/api/"', '"/gateway"', '"/files/"'):
        assert never in r.text
    assert 'addEventListener("push"' in r.text and 'addEventListener("notificationclick"' in r.text

"""The client's pages live on PUBLIC_URL's host name (docs/client.md, "Build and serving"): opened on
another one (the listen address 127.0.0.1 that `make run` binds, a LAN name), a page of the client
redirects to the same path and query there, because the session cookie set on one host name never reaches
the gateway of the other. The interface, files, the gateway, the invitation page and the built assets
answer on any host as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.built_client import stand_in_client
from tests.support.guilds import make_guild, make_invite

INDEX = b'<!doctype html><html><head><script type="module" src="/assets/index-abc123.js"></script></head></html>'
SIGNED_OUT = INDEX.replace(b"<head>", b'<head><meta name="meadhall-session" content="none">')
ELSEWHERE = {"Host": "127.0.0.1:8000"}


@pytest.fixture
def backend() -> str:
    return "sqlite"  # serving reads no database


@pytest.fixture
def built(monkeypatch, tmp_path) -> Path:
    return stand_in_client(monkeypatch, tmp_path, {"index.html": INDEX, "assets/index-abc123.js": "console.log('hi')",
                                                   "sw.js": "self.addEventListener('push', () => {})"})


@pytest.mark.parametrize("path", ["/", "/login?next=%2Fchannels%2F%40me", "/register", "/channels/@me",
                                  "/channels/1/2?jump=3", "/settings/profile", "/admin/users/5"])
async def test_a_client_page_on_another_host_redirects_to_public_url_with_its_path_and_query(client, built, path):
    r = await client.get(path, headers=ELSEWHERE)
    assert r.status_code == 307, r.text
    assert r.headers["location"] == f"http://localhost:8000{path}"
    assert r.headers["cache-control"] == "no-store"  # a later PUBLIC_URL change is followed at once
    assert r.content not in (INDEX, SIGNED_OUT)


@pytest.mark.parametrize("host", ["localhost:8000", "LOCALHOST:8000", "localhost"])
async def test_on_public_urls_host_name_the_page_is_served(client, built, host):
    r = await client.get("/channels/@me", headers={"Host": host})
    assert r.status_code == 200
    assert r.content == SIGNED_OUT


@pytest.mark.parametrize("settings_overrides", [{"PUBLIC_URL": "https://chat.example.com",
                                                 "DOMAIN": "chat.example.com"}])
async def test_behind_a_proxy_the_public_host_is_served_and_the_listen_address_redirected(client, built):
    r = await client.get("/login", headers={"Host": "chat.example.com"})
    assert r.status_code == 200 and r.content == SIGNED_OUT
    r = await client.get("/login?next=%2Fsettings", headers={"Host": "10.0.0.11:8011"})
    assert r.status_code == 307
    assert r.headers["location"] == "https://chat.example.com/login?next=%2Fsettings"


async def test_the_interface_files_gateway_assets_and_invitations_stay_on_any_host(client, built, accounts):
    freya = await accounts.register("freya")
    guild = await make_guild(client, freya)
    code = (await make_invite(client, freya, guild["system_channel_id"]))["code"]

    r = await client.get("/api/v1/users/@me", headers={**ELSEWHERE, **freya.headers})
    assert r.status_code == 200 and r.json()["user"]["username"] == "freya"
    r = await client.get("/api/v1/nowhere", headers=ELSEWHERE)
    assert r.status_code == 404 and r.json()["error"]["code"] == "route.not_found"
    r = await client.get(f"/invite/{code}", headers=ELSEWHERE)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert (await client.get("/assets/index-abc123.js", headers=ELSEWHERE)).status_code == 200
    assert (await client.get("/sw.js", headers=ELSEWHERE)).status_code == 200
    assert (await client.get("/healthz", headers=ELSEWHERE)).json() == {"status": "ok"}
    r = await client.get("/files/1", headers=ELSEWHERE)
    assert r.status_code in (401, 404) and r.json()["error"]["code"]  # the interface's JSON, not a redirect
    # The gateway is a WebSocket route: a plain GET is not redirected to another host.
    assert (await client.get("/gateway", headers=ELSEWHERE)).status_code != 307


async def test_without_a_build_the_front_page_answers_on_any_host(client, monkeypatch, tmp_path):
    monkeypatch.setattr("meadhall.web.client.CLIENT_DIR", tmp_path / "absent")
    r = await client.get("/", headers=ELSEWHERE)
    assert r.status_code == 200 and "make install" in r.text

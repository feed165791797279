"""How the service serves the built web client (docs/client.md, "Build and serving"): every client route
answers index.html (history fallback) with `no-cache` and a strict Content-Security-Policy, hashed files
under /assets/ are cached for a year, other paths keep the interface's JSON 404, and without a build the
same routes answer the page that says how to build the client."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.built_client import stand_in_client

INDEX = b'<!doctype html><html><head><script type="module" src="/assets/index-abc123.js"></script></head></html>'
# A page requested without a session cookie tells the client so (tests/web/test_client_session_hint.py).
SIGNED_OUT = INDEX.replace(b"<head>", b'<head><meta name="meadhall-session" content="none">')
CLIENT_ROUTES = ["/", "/login", "/register", "/channels/@me", "/channels/@me/123", "/channels/1/2",
                 "/settings", "/settings/profile", "/admin", "/admin/users/5"]


@pytest.fixture
def backend() -> str:
    return "sqlite"  # serving reads no database


@pytest.fixture
def built(monkeypatch, tmp_path) -> Path:
    return stand_in_client(monkeypatch, tmp_path, {"index.html": INDEX, "assets/index-abc123.js": "console.log('hi')",
                                                   "assets/index-abc123.css": "body{}", "secret.txt": "not an asset"})


def directives(csp: str) -> dict[str, list[str]]:
    out = {}
    for part in csp.split(";"):
        name, *values = part.split()
        out[name] = values
    return out


@pytest.mark.parametrize("path", CLIENT_ROUTES)
async def test_every_client_route_answers_the_client_page(client, built, path):
    r = await client.get(path)
    assert r.status_code == 200, r.text
    assert r.content == SIGNED_OUT
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert r.headers["cache-control"] == "no-cache"
    assert r.headers["x-content-type-options"] == "nosniff"


async def test_the_policy_allows_only_the_service_the_gateway_and_the_media_server(client, built, rt):
    csp = directives((await client.get("/channels/@me")).headers["content-security-policy"])
    assert csp["script-src"] == ["'self'"]  # no inline script, no other origin
    assert csp["default-src"] == ["'self'"]
    assert csp["object-src"] == ["'none'"]
    assert csp["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in csp["script-src"] and "'unsafe-eval'" not in csp["script-src"]
    assert csp["connect-src"][0] == "'self'"
    assert "ws://localhost:8000" in csp["connect-src"]  # the gateway of PUBLIC_URL's default
    for name, values in csp.items():
        for value in values:
            assert value.startswith("'") or value in ("data:", "blob:") or "localhost:8000" in value, (name, value)


@pytest.mark.parametrize("settings_overrides", [{"PUBLIC_URL": "https://chat.example.com",
                                                 "MEDIA_PUBLIC_URL": "wss://media.example.com/rtc"}])
async def test_behind_tls_the_policy_names_the_secure_gateway_and_the_media_server(client, built):
    r = await client.get("/login", headers={"Host": "chat.example.com"})  # the proxy forwards the public host
    csp = directives(r.headers["content-security-policy"])
    assert "wss://chat.example.com" in csp["connect-src"]
    assert "wss://media.example.com" in csp["connect-src"] and "https://media.example.com" in csp["connect-src"]
    assert not any(v.startswith("ws://") for v in csp["connect-src"])


async def test_hashed_assets_are_cached_for_a_year(client, built):
    r = await client.get("/assets/index-abc123.js")
    assert r.status_code == 200
    assert r.text == "console.log('hi')"
    assert r.headers["content-type"].startswith("text/javascript")
    assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert r.headers["x-content-type-options"] == "nosniff"
    r = await client.get("/assets/index-abc123.css")
    assert r.headers["content-type"].startswith("text/css")


@pytest.mark.parametrize("path", ["/assets/missing-000.js", "/assets/..%2Fsecret.txt", "/assets/../secret.txt",
                                  "/assets/secret.txt", "/assets/.hidden.js"])
async def test_only_files_of_the_assets_folder_are_served(client, built, path):
    r = await client.get(path)
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "route.not_found"


@pytest.mark.parametrize("path", ["/nowhere", "/channelsx", "/api/v1/nowhere", "/loginx"])
async def test_other_paths_keep_the_json_404(client, built, path):
    r = await client.get(path)
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "route.not_found"


async def test_the_interface_is_not_shadowed_by_the_client(client, built):
    r = await client.get("/api/v1/meta")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    r = await client.get("/healthz")
    assert r.json() == {"status": "ok"}


@pytest.mark.parametrize("path", CLIENT_ROUTES)
async def test_without_a_build_the_routes_say_how_to_build_it(client, monkeypatch, tmp_path, path):
    monkeypatch.setattr("meadhall.web.client.CLIENT_DIR", tmp_path / "absent")
    r = await client.get(path)
    assert r.status_code == 200
    assert "make install" in r.text
    assert r.headers["cache-control"] == "no-store"
    assert (await client.get("/assets/index-abc123.js")).status_code == 404


async def test_a_build_made_while_the_service_runs_is_served_at_once(client, monkeypatch, tmp_path):
    root = tmp_path / "later"
    monkeypatch.setattr("meadhall.web.client.CLIENT_DIR", root)
    assert "make install" in (await client.get("/")).text
    root.mkdir()
    (root / "index.html").write_bytes(INDEX)
    assert (await client.get("/")).content == SIGNED_OUT

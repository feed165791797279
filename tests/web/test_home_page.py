"""GET /: until the web client is built, a short HTML page about the instance (docs/client.md, "No client
built"), with the same strict headers as the invitation page (the OpenAPI document)."""

from __future__ import annotations

import re

import pytest

from meadhall import __version__

CSP = "default-src 'self'; img-src 'self'; script-src 'self'"


@pytest.fixture(autouse=True)
def no_client_built(monkeypatch, tmp_path):
    monkeypatch.setattr("meadhall.web.client.CLIENT_DIR", tmp_path / "no-client")


async def test_front_page_names_the_instance_and_links_the_interface(client):
    r = await client.get("/")
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert r.headers["content-security-policy"] == CSP
    assert r.headers["cache-control"] == "no-store"
    assert r.headers["x-content-type-options"] == "nosniff"
    page = r.text
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert "<script" not in page and "style=" not in page
    assert "http://localhost:8000" in page  # PUBLIC_URL's default
    assert f'<span class="version">{__version__}</span>' in page
    assert "make install" in page
    links = re.findall(r'href="([^"]+)"', page)
    assert {"/api/v1/docs", "/api/v1/openapi.json", "/api/v1/meta"} <= set(links)
    for link in links:
        assert (await client.get(link)).status_code == 200, link


@pytest.mark.parametrize("settings_overrides", [{"PUBLIC_URL": "https://chat.example.com/<b>"}])
async def test_front_page_escapes_the_configured_address(client):
    page = (await client.get("/")).text
    assert "<b>" not in page
    assert "https://chat.example.com/&lt;b&gt;" in page

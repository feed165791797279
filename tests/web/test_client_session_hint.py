"""The client's page says when it was requested without a session cookie (docs/client.md, "Sessions"): the
client then draws sign-in without asking `GET /users/@me`, whose 401 was a console error on every
signed-out load. With a cookie, valid or ended, the page says nothing and the client asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.built_client import stand_in_client

INDEX = b'<!doctype html><html><head><script type="module" src="/assets/index-abc123.js"></script></head></html>'
HINT = b'<meta name="meadhall-session" content="none">'


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the hint reads no database


@pytest.fixture
def built(monkeypatch, tmp_path) -> Path:
    return stand_in_client(monkeypatch, tmp_path, {"index.html": INDEX})


async def test_without_a_cookie_the_page_says_signed_out(client, built):
    r = await client.get("/login")
    assert r.status_code == 200
    assert r.content == INDEX.replace(b"<head>", b"<head>" + HINT)
    assert r.headers["vary"] == "Cookie"  # a shared cache keeps the two pages apart


async def test_with_a_cookie_valid_or_not_the_page_says_nothing(client, built, accounts):
    freya = await accounts.register("freya")
    for token in (freya["token"], "ended-or-made-up"):
        r = await client.get("/channels/@me", cookies={"__Host-session": token})
        assert r.status_code == 200
        assert r.content == INDEX  # the client asks the service whether the session still works

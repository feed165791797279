"""GET /invite/{code}: the public HTML invitation page (docs/architecture.md), and what its "Accept invitation"
does: a same-origin script (allowed by the page's CSP) posting to /api/v1/invites/{code} with the session
cookie, checked by the service's Origin rule (docs/reference/errors.md: auth.origin_mismatch)."""

from __future__ import annotations

import hashlib
import html
import re
from typing import Any

import pytest

from tests.support.guilds import make_guild, make_invite

CSP = "default-src 'self'; img-src 'self'; script-src 'self'"
EVIL_NAME = "<script>alert(1)</script>"
EVIL_DESCRIPTION = 'Say "hi" & <b>bye</b> \'now\''


def meta(page: str, prop: str) -> str:
    found = re.search(rf'<meta property="{re.escape(prop)}" content="([^"]*)">', page)
    assert found, f"no {prop} meta tag"
    return found.group(1)


def assert_page_headers(r: Any) -> None:
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert r.headers["cache-control"] == "no-store"
    assert r.headers["content-security-policy"] == CSP


@pytest.fixture
async def invited(client: Any, accounts: Any) -> dict[str, Any]:
    alice = await accounts.register("alice", display_name="Alice of the Hall")
    guild = await make_guild(client, alice, "Mead Hall", description="Mead and songs")
    invite = await make_invite(client, alice, guild["system_channel_id"])
    return {"alice": alice, "guild": guild, "invite": invite}


async def test_page_without_a_session(client, invited):
    code = invited["invite"]["code"]
    r = await client.get(f"/invite/{code}")
    assert r.status_code == 200, r.text
    assert_page_headers(r)
    page = r.text
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert '<h1 class="guild-name">Mead Hall</h1>' in page
    assert "Mead and songs" in page
    assert "1 member<" in page
    assert "Alice of the Hall invited you to join" in page
    assert meta(page, "og:title") == "Mead Hall"
    assert meta(page, "og:description") == "Mead and songs"
    # PUBLIC_URL's default carries the port the service listens on (docs/reference/configuration.md).
    assert meta(page, "og:url") == f"http://localhost:8000/invite/{code}"
    assert invited["invite"]["url"] == f"http://localhost:8000/invite/{code}"
    # Not signed in: creating an account comes first, then signing in; both come back here afterwards.
    create = page.index(f'<a id="create-account" class="button" href="/register?next=/invite/{code}">Create an account</a>')
    sign_in = page.index(f'<a id="accept-invitation" href="/login?next=/invite/{code}">Sign in to accept the invitation</a>')
    assert create < sign_in
    assert "Create an account to accept this invitation; you come back here afterwards." in page
    assert "Already have an account?" in page
    assert "<button" not in page
    # No inline script or style: the CSP would block them anyway.
    assert "<script" not in page
    assert "<style" not in page and "style=" not in page


async def test_page_without_a_session_where_registration_is_closed_offers_only_signing_in(client, invited, rt,
                                                                                          monkeypatch):
    # Closed after the inviter registered (the fixture registers through the interface).
    monkeypatch.setattr(rt.settings, "REGISTRATION_ENABLED", False)
    code = invited["invite"]["code"]
    r = await client.get(f"/invite/{code}")
    assert r.status_code == 200, r.text
    page = r.text
    # Nobody can register here: the page never sends a visitor to a form that refuses them.
    assert "/register" not in page and "Create an account" not in page
    assert f'<a id="accept-invitation" class="button" href="/login?next=/invite/{code}">Accept invitation</a>' in page
    assert "Sign in to accept this invitation; you come back here afterwards." in page


async def test_page_signed_in_offers_the_button(client, accounts, invited):
    code = invited["invite"]["code"]
    bob = await accounts.register("bob")
    r = await client.get(f"/invite/{code}", headers=bob.headers)
    assert r.status_code == 200, r.text
    page = r.text
    button = re.search(r"<button[^>]*>Accept invitation</button>", page, re.S)
    assert button, page
    assert f'data-code="{code}"' in button.group(0)
    assert f'data-endpoint="/api/v1/invites/{code}"' in button.group(0)
    assert f'data-guild-id="{invited["guild"]["id"]}"' in button.group(0)
    assert f'data-channel-id="{invited["guild"]["system_channel_id"]}"' in button.group(0)
    assert 'id="invite-status" role="status"' in page
    assert "/login?next=" not in page
    assert "already a member" not in page
    # The button works through a script file of the service: the CSP allows `'self'` scripts, no inline.
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, re.S)
    assert len(scripts) == 1, scripts
    attributes, inline = scripts[0]
    assert inline.strip() == ""
    src = re.search(r'src="([^"]+)"', attributes)
    assert src and src.group(1).startswith("/static/invite.js?v="), attributes
    assert r.headers["content-security-policy"] == CSP


async def test_page_with_a_session_cookie_knows_a_member(client, invited):
    code = invited["invite"]["code"]
    client.cookies.set("__Host-session", invited["alice"]["token"])
    try:
        r = await client.get(f"/invite/{code}")
    finally:
        client.cookies.clear()
    assert r.status_code == 200, r.text
    assert "You are already a member of this server." in r.text
    assert "<button" in r.text


async def test_page_escapes_every_value(client, accounts):
    mallory = await accounts.register("mallory", display_name='<img src=x onerror="x">')
    guild = await make_guild(client, mallory, EVIL_NAME, description=EVIL_DESCRIPTION)
    invite = await make_invite(client, mallory, guild["system_channel_id"])
    r = await client.get(f"/invite/{invite['code']}")
    assert r.status_code == 200, r.text
    page = r.text
    for raw in (EVIL_NAME, EVIL_DESCRIPTION, "<script", "<b>", '"hi"', "& <", "<img"):
        assert raw not in page, raw
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Say &#34;hi&#34; &amp; &lt;b&gt;bye&lt;/b&gt; &#39;now&#39;" in page
    assert "&lt;img src=x onerror=&#34;x&#34;&gt; invited you to join" in page
    # Attribute values are escaped too, and read back as the original text.
    assert html.unescape(meta(page, "og:title")) == EVIL_NAME
    assert html.unescape(meta(page, "og:description")) == EVIL_DESCRIPTION


async def test_page_without_description_still_has_og_tags(client, accounts):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Quiet Hall")
    invite = await make_invite(client, alice, guild["system_channel_id"])
    page = (await client.get(f"/invite/{invite['code']}")).text
    assert meta(page, "og:title") == "Quiet Hall"
    assert "Quiet Hall" in meta(page, "og:description")


async def test_unknown_code_is_a_404_page(client, accounts):
    for code in ["zzzzzzzz", "Not-A-Code"]:
        r = await client.get(f"/invite/{code}")
        assert r.status_code == 404, r.text
        assert_page_headers(r)
        assert "Invitation not found" in r.text
        assert "<script" not in r.text


async def test_expired_and_used_up_codes_are_404_pages(client, accounts, clock, invited):
    alice = invited["alice"]
    once = await make_invite(client, alice, invited["guild"]["system_channel_id"], max_uses=1)
    bob = await accounts.register("bob")
    assert (await client.post(f"/api/v1/invites/{once['code']}", headers=bob.headers)).status_code == 200
    r = await client.get(f"/invite/{once['code']}")
    assert r.status_code == 404
    assert "Invitation not found" in r.text
    clock.advance(86400)
    r = await client.get(f"/invite/{invited['invite']['code']}")
    assert r.status_code == 404
    assert r.headers["content-type"] == "text/html; charset=utf-8"


async def test_member_count_follows_joins(client, accounts, invited):
    bob = await accounts.register("bob")
    code = invited["invite"]["code"]
    assert (await client.post(f"/api/v1/invites/{code}", headers=bob.headers)).status_code == 200
    page = (await client.get(f"/invite/{code}")).text
    assert "2 members<" in page


@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"invites.preview": "2/60"}}])
async def test_page_shares_the_preview_bucket(client, accounts, clock, invited):
    code = invited["invite"]["code"]
    assert (await client.get(f"/invite/{code}")).status_code == 200
    assert (await client.get(f"/api/v1/invites/{code}")).status_code == 200
    r = await client.get(f"/invite/{code}")
    assert r.status_code == 429
    assert r.json()["error"]["bucket"] == "invites.preview"
    assert "Retry-After" in r.headers
    clock.advance(60)
    assert (await client.get(f"/invite/{code}")).status_code == 200


async def test_page_is_outside_the_api_prefix(client, invited):
    r = await client.get(f"/api/v1/invite/{invited['invite']['code']}")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "route.not_found"


async def test_the_accept_script_is_served_as_javascript(client, accounts, invited):
    bob = await accounts.register("bob")
    page = (await client.get(f"/invite/{invited['invite']['code']}", headers=bob.headers)).text
    src = html.unescape(re.search(r'<script src="([^"]+)"', page).group(1))
    r = await client.get(src)
    assert r.status_code == 200
    assert r.headers["content-type"].split(";")[0] == "application/javascript"
    assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert r.headers["x-content-type-options"] == "nosniff"
    script = r.text
    # What the script sends is what the end-to-end test below sends: a POST to the button's endpoint with
    # the cookie; it reads the error envelope's message and guides to sign-in on 401.
    assert "button.dataset.endpoint" in script and 'method: "POST"' in script
    assert 'credentials: "same-origin"' in script
    assert "body.error.message" in script and "/login?next=" in script
    # The version in the URL is the content's digest: a changed script gets a new URL.
    assert src.split("?v=")[1] == hashlib.sha256(r.content).hexdigest()[:16]


async def test_unknown_static_names_are_404(client):
    for name in ["nope.js", "..%2Fpages.py", "invite.html"]:
        r = await client.get(f"/static/{name}")
        assert r.status_code == 404, name
    assert (await client.get("/static/../web/pages.py")).status_code == 404


async def test_accept_with_a_cookie_session_from_the_public_origin_joins(client, accounts, rt, invited):
    """The request the page's script makes: POST with the session cookie; the browser adds the page's
    Origin, which is PUBLIC_URL's origin (http://localhost:8000 by default)."""
    code = invited["invite"]["code"]
    bob = await accounts.register("bob")
    assert rt.settings.public_origin == "http://localhost:8000"
    client.cookies.set("__Host-session", bob["token"])
    try:
        page = (await client.get(f"/invite/{code}")).text
        endpoint = re.search(r'data-endpoint="([^"]+)"', page).group(1)
        r = await client.post(endpoint, headers={"Origin": "http://localhost:8000", "Accept": "application/json"})
        assert r.status_code == 200, r.text
        assert r.json() == {"guild_id": invited["guild"]["id"]}
        page = (await client.get(f"/invite/{code}")).text
    finally:
        client.cookies.clear()
    assert "You are already a member of this server." in page
    assert "2 members<" in page


async def test_accept_from_a_foreign_origin_is_refused_in_words(client, accounts, invited):
    code = invited["invite"]["code"]
    bob = await accounts.register("bob")
    client.cookies.set("__Host-session", bob["token"])
    try:
        for origin in ["http://evil.example", "http://127.0.0.1:8000", "http://localhost:8001"]:
            r = await client.post(f"/api/v1/invites/{code}", headers={"Origin": origin})
            assert r.status_code == 403, origin
            # The script shows this message to the visitor.
            assert r.json()["error"]["code"] == "auth.origin_mismatch"
            assert r.json()["error"]["message"]
    finally:
        client.cookies.clear()
    page = (await client.get(f"/invite/{code}")).text
    assert "1 member<" in page


async def test_accept_without_a_session_is_401(client, invited):
    r = await client.post(f"/api/v1/invites/{invited['invite']['code']}", headers={"Origin": "http://localhost:8000"})
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "auth.unauthorized"

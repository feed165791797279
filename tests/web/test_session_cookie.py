"""The `__Host-session` cookie carries `Secure` always (docs/architecture.md), also on the plain-HTTP `make run`
address http://localhost:8000: browsers refuse a `__Host-` cookie without it and accept `Secure` cookies
from loopback origins."""

from __future__ import annotations

import pytest

PASSWORD = "correct horse battery staple"
MAX_AGE = 30 * 86400


def set_cookies(r) -> list[str]:
    return r.headers.get_list("set-cookie")


@pytest.mark.parametrize("settings_overrides", [{}, {"PUBLIC_URL": "https://chat.example.com"}],
                         ids=["plain-http-default", "tls"])
async def test_registration_rotation_and_logout_cookies_are_secure(client, rt, clock, settings_overrides):
    if not settings_overrides:
        assert (rt.settings.PUBLIC_URL, rt.settings.TLS_ENABLED) == ("http://localhost:8000", False)
    origin = rt.settings.public_origin
    body = {"username": "alice", "email": "alice@example.com", "password": PASSWORD}
    r = await client.post("/api/v1/auth/register", json=body)
    assert r.status_code == 201, r.text
    token = r.json()["token"]
    assert set_cookies(r) == [f"__Host-session={token}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age={MAX_AGE}"]

    # A token older than SESSION_ROTATE_HOURS used through the cookie gets a new cookie, Secure too.
    client.cookies.clear()
    client.cookies.set("__Host-session", token)
    clock.advance(25 * 3600)
    r = await client.get("/api/v1/users/@me")
    assert r.status_code == 200, r.text
    rotated = r.headers["x-session-token"]
    assert set_cookies(r) == [
        f"__Host-session={rotated}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age={MAX_AGE}"]

    client.cookies.clear()
    client.cookies.set("__Host-session", rotated)
    r = await client.post("/api/v1/auth/logout", headers={"Origin": origin})
    assert r.status_code == 204, r.text
    assert set_cookies(r) == ["__Host-session=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0"]
    client.cookies.clear()

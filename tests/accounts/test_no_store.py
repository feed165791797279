"""Answers that carry a session token, a TOTP secret or backup codes are never stored by a cache
(docs/architecture.md, Sessions): `Cache-Control: no-store`."""

from __future__ import annotations

from datetime import timedelta

from fastapi import Response

from meadhall.auth.deps import PrincipalDep
from tests.support.accounts import BACKUP_CODES, ENABLE, SETUP, login, totp_code

ME = "/api/v1/users/@me"


def assert_not_stored(r) -> None:
    assert r.headers.get_list("cache-control") == ["no-store"], r.headers


async def test_registration_answer_is_not_stored(client):
    r = await client.post("/api/v1/auth/register", json={
        "username": "alice", "email": "alice@example.com", "password": "correct horse battery staple"})
    assert r.status_code == 201, r.text
    assert "token" in r.json()
    assert_not_stored(r)


async def test_login_answer_is_not_stored(client, accounts):
    a = await accounts.register("alice")
    r = await login(client, "alice", a["password"])
    assert r.status_code == 200 and "token" in r.json()
    assert_not_stored(r)


async def test_answer_carrying_a_rotated_token_is_not_stored(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(timedelta(hours=24, seconds=1).total_seconds())
    r = await client.get(ME, headers=a.headers)
    assert r.status_code == 200
    assert r.headers.get("x-session-token")
    assert_not_stored(r)


async def test_rotation_overrides_a_route_that_allows_caching(client, accounts, clock, app):
    """A route's own Cache-Control gives way when the answer carries a new token."""

    @app.get("/api/v1/_test/cacheable")
    async def cacheable(response: Response, principal: PrincipalDep) -> dict[str, bool]:
        response.headers["Cache-Control"] = "private, max-age=60"
        return {"ok": True}

    a = await accounts.register("alice")
    plain = await client.get("/api/v1/_test/cacheable", headers=a.headers)
    assert plain.headers.get_list("cache-control") == ["private, max-age=60"]
    clock.advance(timedelta(hours=24, seconds=1).total_seconds())
    r = await client.get("/api/v1/_test/cacheable", headers=a.headers)
    assert r.headers.get("x-session-token")
    assert_not_stored(r)


async def test_2fa_setup_enable_and_backup_codes_answers_are_not_stored(client, accounts, clock):
    a = await accounts.register("alice")
    setup = await client.post(SETUP, headers=a.headers)
    assert setup.status_code == 200 and "secret" in setup.json()
    assert_not_stored(setup)
    enable = await client.post(ENABLE, json={"totp_code": totp_code(setup.json()["secret"], clock)},
                               headers=a.headers)
    assert enable.status_code == 200 and len(enable.json()["backup_codes"]) == 8
    assert_not_stored(enable)
    regenerated = await client.post(BACKUP_CODES, headers=a.headers)
    assert regenerated.status_code == 200 and len(regenerated.json()["backup_codes"]) == 8
    assert_not_stored(regenerated)

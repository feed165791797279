"""Sessions (docs/architecture.md, the OpenAPI document): carriers and their precedence, listing and revocation, logout,
sliding expiry, activity refresh, token rotation with its 60 s grace period, and the Origin check."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import httpx
import pytest

from tests.support.accounts import LOGOUT, LOGOUT_ALL, ME, SESSIONS, bearer, cookie, second_session
from tests.support.http import assert_error
from tests.support.shapes import parse_ts

CLEARED = "__Host-session=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0"


async def sessions_of(client: Any, headers: dict[str, str]) -> list[dict[str, Any]]:
    r = await client.get(SESSIONS, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()["sessions"]


# ---- carriers ------------------------------------------------------------------------------------


async def test_bearer_and_cookie_both_authenticate(client, accounts):
    a = await accounts.register("alice")
    for headers in (bearer(a["token"]), cookie(a["token"])):
        r = await client.get(ME, headers=headers)
        assert r.status_code == 200, r.text
        assert r.json()["user"]["id"] == a.id


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": "Bearer "},
    {"Authorization": "Bearer not-a-real-token"},
    {"Authorization": "Basic YWxpY2U6cGFzc3dvcmQ="},
    {"Cookie": "__Host-session=not-a-real-token"},
    {"Cookie": "session=whatever"},
])
async def test_missing_or_invalid_credentials_are_401(client, accounts, headers):
    await accounts.register("alice")
    assert_error(await client.get(ME, headers=headers), 401, "auth.unauthorized")


async def test_authorization_header_wins_over_cookie(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    # An invalid Bearer token is refused even though the cookie is valid.
    r = await client.get(ME, headers={**bearer("x" * 43), **cookie(a["token"])})
    assert_error(r, 401, "auth.unauthorized")
    r = await client.get(ME, headers={"Authorization": "Basic Zm9vOmJhcg==", **cookie(a["token"])})
    assert_error(r, 401, "auth.unauthorized")
    # A valid Bearer token decides who the caller is, whatever the cookie says.
    r = await client.get(ME, headers={**bearer(b["token"]), **cookie(a["token"])})
    assert r.status_code == 200 and r.json()["user"]["id"] == b.id


# ---- listing -------------------------------------------------------------------------------------


async def test_list_sessions_flags_current_and_orders_by_last_use(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(1)
    s2 = await second_session(client, a)
    clock.advance(1)
    s3 = await second_session(client, a)
    clock.advance(120)
    # The first session is used last, so it comes first although it is the oldest.
    listed = await sessions_of(client, bearer(a["token"]))
    assert [s["id"] for s in listed] == [a["session"]["id"], s3["session"]["id"], s2["session"]["id"]]
    assert [s["current"] for s in listed] == [True, False, False]
    assert all(s["method"] == "password" for s in listed)
    assert all(s["ip"] == "127.0.0.1" for s in listed)
    for s in listed:
        assert parse_ts(s["expires_at"]) - parse_ts(s["last_used_at"]) == timedelta(days=30)
    # Seen from another session, the current flag moves.
    listed = await sessions_of(client, bearer(s2["token"]))
    assert [s["id"] for s in listed][0] == s2["session"]["id"]
    assert {s["id"]: s["current"] for s in listed} == {
        a["session"]["id"]: False, s2["session"]["id"]: True, s3["session"]["id"]: False,
    }


async def test_list_shows_only_own_sessions(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    await second_session(client, b)
    listed = await sessions_of(client, a.headers)
    assert [s["id"] for s in listed] == [a["session"]["id"]]


# ---- revocation ----------------------------------------------------------------------------------


async def test_revoke_own_other_session(client, accounts, capture_events):
    a = await accounts.register("alice")
    other = await second_session(client, a)
    r = await client.delete(f"{SESSIONS}/{other['session']['id']}", headers=a.headers)
    assert r.status_code == 204, r.text
    assert r.content == b""
    assert_error(await client.get(ME, headers=bearer(other["token"])), 401, "auth.unauthorized")
    assert (await client.get(ME, headers=a.headers)).status_code == 200
    assert [s["id"] for s in await sessions_of(client, a.headers)] == [a["session"]["id"]]
    await capture_events.settle()
    [ev] = capture_events.of_type("SESSION_INVALIDATED")
    assert ev.data == {"reason": "revoked", "session_id": other["session"]["id"]}
    assert ev.users == (int(a.id),)
    assert ev.sessions == (int(other["session"]["id"]),)
    # Revoking it again: it no longer exists.
    r = await client.delete(f"{SESSIONS}/{other['session']['id']}", headers=a.headers)
    assert_error(r, 404, "session.not_found")


async def test_revoke_another_users_session_is_not_found(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    r = await client.delete(f"{SESSIONS}/{b['session']['id']}", headers=a.headers)
    assert_error(r, 404, "session.not_found")
    assert (await client.get(ME, headers=b.headers)).status_code == 200


@pytest.mark.parametrize("raw", ["abc", "-1", "1.5", "99999999999999999999", "0", "123456789"])
async def test_revoke_malformed_or_unknown_id_is_not_found(client, accounts, raw):
    a = await accounts.register("alice")
    assert_error(await client.delete(f"{SESSIONS}/{raw}", headers=a.headers), 404, "session.not_found")
    assert (await client.get(ME, headers=a.headers)).status_code == 200


async def test_revoke_requires_a_session(client, accounts):
    a = await accounts.register("alice")
    assert_error(await client.delete(f"{SESSIONS}/{a['session']['id']}"), 401, "auth.unauthorized")
    assert (await client.get(ME, headers=a.headers)).status_code == 200


# ---- logout --------------------------------------------------------------------------------------


async def test_logout_ends_this_session_only(client, accounts, capture_events):
    a = await accounts.register("alice")
    other = await second_session(client, a)
    r = await client.post(LOGOUT, headers=a.headers)
    assert r.status_code == 204, r.text
    assert r.headers.get_list("set-cookie") == [CLEARED]
    assert_error(await client.get(ME, headers=a.headers), 401, "auth.unauthorized")
    assert (await client.get(ME, headers=bearer(other["token"]))).status_code == 200
    await capture_events.settle()
    [ev] = capture_events.of_type("SESSION_INVALIDATED")
    assert ev.data == {"reason": "logout", "session_id": a["session"]["id"]}
    assert ev.users == (int(a.id),)
    assert ev.sessions == (int(a["session"]["id"]),)


async def test_logout_with_cookie(client, accounts):
    a = await accounts.register("alice")
    r = await client.post(LOGOUT, headers=cookie(a["token"]))
    assert r.status_code == 204, r.text
    assert r.headers.get_list("set-cookie") == [CLEARED]
    assert_error(await client.get(ME, headers=cookie(a["token"])), 401, "auth.unauthorized")


async def test_logout_requires_a_session(client):
    assert_error(await client.post(LOGOUT), 401, "auth.unauthorized")


async def test_logout_all_ends_every_session(client, accounts, capture_events):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    s2 = await second_session(client, a)
    s3 = await second_session(client, a)
    r = await client.post(LOGOUT_ALL, headers=bearer(s2["token"]))
    assert r.status_code == 204, r.text
    assert r.headers.get_list("set-cookie") == [CLEARED]
    for token in (a["token"], s2["token"], s3["token"]):
        assert_error(await client.get(ME, headers=bearer(token)), 401, "auth.unauthorized")
    assert (await client.get(ME, headers=b.headers)).status_code == 200
    await capture_events.settle()
    # One event per session (docs/reference/events.md: `{reason, session_id}`), each to that session's connections.
    events = capture_events.of_type("SESSION_INVALIDATED")
    expected = {x["session"]["id"] for x in (a, s2, s3)}
    assert {e.data["session_id"] for e in events} == expected
    for ev in events:
        assert ev.data["reason"] == "logout_all"
        assert ev.users == (int(a.id),)
        assert ev.sessions == (int(ev.data["session_id"]),)


# ---- lifetime ------------------------------------------------------------------------------------


async def test_session_expires_after_30_days_without_use(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(days=31)
    assert_error(await client.get(ME, headers=a.headers), 401, "auth.unauthorized")
    # The expired session is gone from the list; a new sign-in works.
    fresh = await second_session(client, a)
    assert [s["id"] for s in await sessions_of(client, bearer(fresh["token"]))] == [fresh["session"]["id"]]


async def test_expired_sessions_are_not_listed(client, accounts, clock):
    a = await accounts.register("alice")
    other = await second_session(client, a)
    clock.advance(days=20)
    r = await client.get(ME, headers=bearer(other["token"]))
    token = r.headers["X-Session-Token"]
    clock.advance(days=11)  # the first session has been unused for 31 days, the other for 11
    listed = await sessions_of(client, bearer(token))
    assert [s["id"] for s in listed] == [other["session"]["id"]]


async def test_session_still_valid_just_before_30_days(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(days=30, seconds=-1)
    assert (await client.get(ME, headers=a.headers)).status_code == 200


async def test_session_expiry_slides_with_use(client, accounts, clock):
    a = await accounts.register("alice")
    token = a["token"]
    for _ in range(3):  # 87 days in all, never 30 days without use
        clock.advance(days=29)
        r = await client.get(ME, headers=bearer(token))
        assert r.status_code == 200, r.text
        token = r.headers.get("X-Session-Token", token)
    clock.advance(days=30, seconds=1)
    assert_error(await client.get(ME, headers=bearer(token)), 401, "auth.unauthorized")


async def test_last_used_at_refreshed_at_most_once_a_minute(client, accounts, clock):
    a = await accounts.register("alice")
    created = a["session"]["last_used_at"]
    clock.advance(59)
    [s] = await sessions_of(client, a.headers)
    assert s["last_used_at"] == created
    clock.advance(1)
    [s] = await sessions_of(client, a.headers)
    assert parse_ts(s["last_used_at"]) == parse_ts(created) + timedelta(seconds=60)
    assert parse_ts(s["expires_at"]) == parse_ts(s["last_used_at"]) + timedelta(days=30)
    refreshed = s["last_used_at"]
    clock.advance(30)
    [s] = await sessions_of(client, a.headers)
    assert s["last_used_at"] == refreshed


async def test_activity_refresh_records_the_address_of_last_use(app, client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(61)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as elsewhere:
        r = await elsewhere.get(ME, headers=a.headers)
        assert r.status_code == 200, r.text
    [s] = await sessions_of(client, a.headers)
    assert s["ip"] == "203.0.113.9"


async def test_activity_refreshes_last_seen_at(client, accounts, clock):
    a = await accounts.register("alice")
    first = a["user"]["last_seen_at"]
    clock.advance(61)
    me = (await client.get(ME, headers=a.headers)).json()["user"]
    assert parse_ts(me["last_seen_at"]) == parse_ts(first) + timedelta(seconds=61)


# ---- rotation ------------------------------------------------------------------------------------


async def test_no_rotation_before_24_hours(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(hours=23, minutes=59)
    r = await client.get(ME, headers=a.headers)
    assert r.status_code == 200
    assert "x-session-token" not in r.headers
    assert "set-cookie" not in r.headers


async def test_rotation_with_bearer(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(hours=25)
    r = await client.get(ME, headers=a.headers)
    assert r.status_code == 200, r.text
    new = r.headers["X-Session-Token"]
    assert new != a["token"] and len(new) == 43
    assert "set-cookie" not in r.headers  # the request did not use the cookie
    # The old token keeps working for 60 s, without rotating again.
    clock.advance(59)
    r = await client.get(ME, headers=a.headers)
    assert r.status_code == 200 and "x-session-token" not in r.headers
    # The new token works and is the same session.
    listed = await sessions_of(client, bearer(new))
    assert [s["id"] for s in listed] == [a["session"]["id"]]
    assert listed[0]["current"] is True
    clock.advance(2)
    assert_error(await client.get(ME, headers=a.headers), 401, "auth.unauthorized")
    r = await client.get(ME, headers=bearer(new))
    assert r.status_code == 200 and "x-session-token" not in r.headers


async def test_rotation_with_cookie_sets_a_new_cookie(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(hours=25)
    r = await client.get(ME, headers=cookie(a["token"]))
    assert r.status_code == 200, r.text
    new = r.headers["X-Session-Token"]
    assert r.headers.get_list("set-cookie") == [
        f"__Host-session={new}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=2592000"
    ]
    clock.advance(61)
    assert_error(await client.get(ME, headers=cookie(a["token"])), 401, "auth.unauthorized")
    assert (await client.get(ME, headers=cookie(new))).status_code == 200


async def test_rotation_keeps_session_id_and_step_up(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(hours=25)
    r = await client.post("/api/v1/auth/step-up", json={"password": a["password"]}, headers=a.headers)
    assert r.status_code == 200, r.text
    new = r.headers["X-Session-Token"]  # the step-up request itself rotated the token
    r = await client.post("/api/v1/auth/password", json={"new_password": "a brand new passphrase"},
                          headers=bearer(new))
    assert r.status_code == 204, r.text
    [s] = await sessions_of(client, bearer(new))
    assert s["id"] == a["session"]["id"]


async def test_concurrent_requests_at_rotation_get_one_working_token(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(hours=25)
    rs = await asyncio.gather(*(client.get(ME, headers=a.headers) for _ in range(5)))
    assert all(r.status_code == 200 for r in rs), [r.text for r in rs]
    issued = [r.headers["X-Session-Token"] for r in rs if "x-session-token" in r.headers]
    assert len(issued) == 1
    clock.advance(61)
    # Whatever a client kept from those answers keeps it signed in; the old token has expired.
    for token in issued:
        assert (await client.get(ME, headers=bearer(token))).status_code == 200
    assert_error(await client.get(ME, headers=a.headers), 401, "auth.unauthorized")


async def test_rotated_token_is_rotated_again_after_another_day(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(hours=25)
    first = (await client.get(ME, headers=a.headers)).headers["X-Session-Token"]
    clock.advance(hours=25)
    r = await client.get(ME, headers=bearer(first))
    second = r.headers["X-Session-Token"]
    assert len({a["token"], first, second}) == 3
    clock.advance(61)
    for old in (a["token"], first):
        assert_error(await client.get(ME, headers=bearer(old)), 401, "auth.unauthorized")
    assert (await client.get(ME, headers=bearer(second))).status_code == 200


# ---- Origin check ------------------------------------------------------------------------------


@pytest.mark.parametrize("origin", ["http://evil.example", "https://localhost", "http://localhost:8080", "null"])
async def test_cookie_write_from_foreign_origin_is_refused(client, accounts, origin):
    a = await accounts.register("alice")
    r = await client.patch(ME, json={"bio": "pwned"}, headers={**cookie(a["token"]), "Origin": origin})
    assert_error(r, 403, "auth.origin_mismatch")
    me = (await client.get(ME, headers=a.headers)).json()["user"]
    assert me["bio"] == ""


async def test_cookie_write_from_own_origin_or_without_origin_is_allowed(client, accounts):
    a = await accounts.register("alice")
    r = await client.patch(ME, json={"bio": "one"}, headers={**cookie(a["token"]), "Origin": "http://localhost:8000"})
    assert r.status_code == 200, r.text
    assert r.json()["user"]["bio"] == "one"
    r = await client.patch(ME, json={"bio": "two"}, headers=cookie(a["token"]))
    assert r.status_code == 200, r.text
    assert r.json()["user"]["bio"] == "two"


async def test_bearer_write_with_foreign_origin_is_not_checked(client, accounts):
    a = await accounts.register("alice")
    r = await client.patch(ME, json={"bio": "native app"}, headers={**a.headers, "Origin": "http://evil.example"})
    assert r.status_code == 200, r.text
    assert r.json()["user"]["bio"] == "native app"


async def test_cookie_read_with_foreign_origin_is_not_checked(client, accounts):
    a = await accounts.register("alice")
    r = await client.get(ME, headers={**cookie(a["token"]), "Origin": "http://evil.example"})
    assert r.status_code == 200, r.text


async def test_cookie_logout_and_revoke_from_foreign_origin_are_refused(client, accounts):
    a = await accounts.register("alice")
    other = await second_session(client, a)
    evil = {**cookie(a["token"]), "Origin": "http://evil.example"}
    assert_error(await client.post(LOGOUT, headers=evil), 403, "auth.origin_mismatch")
    assert_error(await client.post(LOGOUT_ALL, headers=evil), 403, "auth.origin_mismatch")
    r = await client.delete(f"{SESSIONS}/{other['session']['id']}", headers=evil)
    assert_error(r, 403, "auth.origin_mismatch")
    assert len(await sessions_of(client, a.headers)) == 2


@pytest.mark.parametrize("settings_overrides", [{"PUBLIC_URL": "https://chat.example.com"}])
async def test_origin_is_compared_with_public_url(client, accounts):
    a = await accounts.register("alice")
    headers = cookie(a["token"])
    r = await client.patch(ME, json={"bio": "x"}, headers={**headers, "Origin": "http://localhost:8000"})
    assert_error(r, 403, "auth.origin_mismatch")
    r = await client.patch(ME, json={"bio": "y"}, headers={**headers, "Origin": "https://chat.example.com"})
    assert r.status_code == 200, r.text

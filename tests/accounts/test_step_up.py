"""Step-up (docs/architecture.md, the OpenAPI document) and password change: a fresh sign-in is stepped up for 10 minutes,
POST /auth/step-up renews the window (with the second factor when 2FA is on), and a password change
needs it, revokes the other sessions and replaces the password."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import update

from meadhall.db.schema import users
from tests.support.accounts import STEP_UP, bearer, enable_2fa, login, next_code, totp_code
from tests.support.http import assert_error
from tests.support.shapes import parse_ts

ME = "/api/v1/users/@me"
PASSWORD = "/api/v1/auth/password"
NEW_PASSWORD = "a completely new passphrase"


async def change(client: Any, headers: dict[str, str], new: str = NEW_PASSWORD) -> Any:
    return await client.post(PASSWORD, json={"new_password": new}, headers=headers)


# ---- the window ----------------------------------------------------------------------------------


async def test_registration_is_stepped_up_for_ten_minutes(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(599)
    assert (await change(client, a.headers)).status_code == 204


async def test_password_sign_in_is_stepped_up(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(3600)
    r = await login(client, "alice", a["password"])
    assert r.status_code == 200, r.text
    session = r.json()["session"]
    assert parse_ts(session["step_up_expires_at"]) == parse_ts(session["created_at"]) + timedelta(minutes=10)
    assert (await change(client, bearer(r.json()["token"]))).status_code == 204


async def test_step_up_expires_after_ten_minutes(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(601)
    assert_error(await change(client, a.headers), 403, "auth.step_up_required")
    # The password was not changed.
    assert (await login(client, "alice", a["password"])).status_code == 200
    assert_error(await login(client, "alice", NEW_PASSWORD), 401, "auth.invalid_credentials")


async def test_step_up_with_wrong_password(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(601)
    r = await client.post(STEP_UP, json={"password": "not my password"}, headers=a.headers)
    assert_error(r, 401, "auth.invalid_credentials")
    # A failed step-up grants nothing, and the session itself is still valid.
    assert_error(await change(client, a.headers), 403, "auth.step_up_required")
    assert (await client.get(ME, headers=a.headers)).status_code == 200


async def test_step_up_with_right_password(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(601)
    r = await client.post(STEP_UP, json={"password": a["password"]}, headers=a.headers)
    assert r.status_code == 200, r.text
    assert set(r.json()) == {"step_up_expires_at"}
    until = parse_ts(r.json()["step_up_expires_at"])
    assert abs(until - (clock.now() + timedelta(minutes=10))) < timedelta(milliseconds=2)
    sessions = (await client.get("/api/v1/auth/sessions", headers=a.headers)).json()["sessions"]
    assert parse_ts(sessions[0]["step_up_expires_at"]) == until
    assert (await change(client, a.headers)).status_code == 204


async def test_renewed_window_also_lasts_ten_minutes(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(3600)
    assert (await client.post(STEP_UP, json={"password": a["password"]}, headers=a.headers)).status_code == 200
    clock.advance(601)
    assert_error(await change(client, a.headers), 403, "auth.step_up_required")


async def test_step_up_belongs_to_one_session(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(3600)
    other = (await login(client, "alice", a["password"])).json()
    clock.advance(601)
    assert (await client.post(STEP_UP, json={"password": a["password"]}, headers=a.headers)).status_code == 200
    assert_error(await change(client, bearer(other["token"])), 403, "auth.step_up_required")


async def test_step_up_requires_a_session(client):
    assert_error(await client.post(STEP_UP, json={"password": "whatever-password"}), 401, "auth.unauthorized")


# ---- with 2FA ------------------------------------------------------------------------------------


async def test_step_up_with_2fa_needs_a_code(client, accounts, clock):
    a = await accounts.register("alice")
    secret, codes = await enable_2fa(client, a, clock)
    clock.advance(601)
    r = await client.post(STEP_UP, json={"password": a["password"]}, headers=a.headers)
    assert_error(r, 401, "auth.2fa_required")
    r = await client.post(STEP_UP, json={"password": a["password"], "totp_code": totp_code(secret, clock, 3)},
                          headers=a.headers)
    assert_error(r, 401, "auth.invalid_code")
    r = await client.post(STEP_UP, json={"password": "not my password", "totp_code": totp_code(secret, clock)},
                          headers=a.headers)
    assert_error(r, 401, "auth.invalid_credentials")
    assert_error(await change(client, a.headers), 403, "auth.step_up_required")
    r = await client.post(STEP_UP, json={"password": a["password"], "totp_code": next_code(secret, clock)},
                          headers=a.headers)
    assert r.status_code == 200, r.text
    assert (await change(client, a.headers)).status_code == 204


async def test_step_up_with_backup_code_consumes_it(client, accounts, clock):
    a = await accounts.register("alice")
    _, codes = await enable_2fa(client, a, clock)
    clock.advance(601)
    r = await client.post(STEP_UP, json={"password": a["password"], "backup_code": codes[0]}, headers=a.headers)
    assert r.status_code == 200, r.text
    r = await client.post(STEP_UP, json={"password": a["password"], "backup_code": codes[0]}, headers=a.headers)
    assert_error(r, 401, "auth.invalid_code")
    assert_error(await login(client, "alice", a["password"], backup_code=codes[0]), 401, "auth.invalid_code")


async def test_step_up_totp_code_cannot_be_replayed_at_login(client, accounts, clock):
    a = await accounts.register("alice")
    secret, _ = await enable_2fa(client, a, clock)
    code = next_code(secret, clock)
    r = await client.post(STEP_UP, json={"password": a["password"], "totp_code": code}, headers=a.headers)
    assert r.status_code == 200, r.text
    assert_error(await login(client, "alice", a["password"], totp_code=code), 401, "auth.invalid_code")


@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"auth.step_up": "2/60"}}])
async def test_step_up_rate_limit(client, accounts):
    a = await accounts.register("alice")
    for _ in range(2):
        assert (await client.post(STEP_UP, json={"password": "wrong password!"}, headers=a.headers)).status_code == 401
    r = await client.post(STEP_UP, json={"password": a["password"]}, headers=a.headers)
    assert assert_error(r, 429, "rate_limited")["bucket"] == "auth.step_up"


# ---- password change -----------------------------------------------------------------------------


async def test_password_change_revokes_the_other_sessions(client, accounts, capture_events):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    s2 = (await login(client, "alice", a["password"])).json()
    s3 = (await login(client, "alice", a["password"])).json()
    r = await change(client, a.headers)
    assert r.status_code == 204, r.text
    assert r.content == b""
    assert "set-cookie" not in r.headers
    for other in (s2, s3):
        assert_error(await client.get(ME, headers=bearer(other["token"])), 401, "auth.unauthorized")
    assert (await client.get(ME, headers=a.headers)).status_code == 200
    assert (await client.get(ME, headers=b.headers)).status_code == 200
    listed = (await client.get("/api/v1/auth/sessions", headers=a.headers)).json()["sessions"]
    assert [s["id"] for s in listed] == [a["session"]["id"]]

    await capture_events.settle()
    events = capture_events.of_type("SESSION_INVALIDATED")
    assert {e.data["session_id"] for e in events} == {s2["session"]["id"], s3["session"]["id"]}
    for ev in events:
        assert ev.data["reason"] == "password_changed"
        assert ev.users == (int(a.id),)
        assert ev.sessions == (int(ev.data["session_id"]),)


async def test_password_change_replaces_the_password(client, accounts):
    a = await accounts.register("alice")
    assert (await change(client, a.headers)).status_code == 204
    assert_error(await login(client, "alice", a["password"]), 401, "auth.invalid_credentials")
    r = await login(client, "alice", NEW_PASSWORD)
    assert r.status_code == 200, r.text
    # Step-up now checks the new password.
    r = await client.post(STEP_UP, json={"password": a["password"]}, headers=a.headers)
    assert_error(r, 401, "auth.invalid_credentials")
    assert (await client.post(STEP_UP, json={"password": NEW_PASSWORD}, headers=a.headers)).status_code == 200


async def test_password_change_clears_password_reset_required(client, accounts, rt):
    a = await accounts.register("alice")
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(a.id)).values(password_reset_required=True))
    assert (await client.get(ME, headers=a.headers)).json()["user"]["password_reset_required"] is True
    assert (await change(client, a.headers)).status_code == 204
    assert (await client.get(ME, headers=a.headers)).json()["user"]["password_reset_required"] is False


@pytest.mark.parametrize(("new", "message"), [
    ("short9char", None),  # 10 characters: accepted
    ("abcdefgh9", "too short"),
    ("QWERTYUIOP", "too common"),
    ("x" * 257, "too long"),
])
async def test_new_password_policy(client, accounts, new, message):
    a = await accounts.register("alice")
    r = await change(client, a.headers, new)
    if message is None:
        assert r.status_code == 204, r.text
        return
    err = assert_error(r, 422, "validation.failed")
    assert err["details"] == [{"field": "new_password", "message": message}]
    # Nothing changed: the old password still signs in, no session was revoked.
    assert (await login(client, "alice", a["password"])).status_code == 200
    assert (await client.get(ME, headers=a.headers)).status_code == 200


async def test_password_change_requires_a_session(client):
    assert_error(await client.post(PASSWORD, json={"new_password": NEW_PASSWORD}), 401, "auth.unauthorized")

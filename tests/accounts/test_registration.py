"""POST /auth/register (the OpenAPI document, docs/architecture.md): the answer, the session cookie, uniqueness in
any letter case, the password policy, field validation, the registration switch and the rate limit."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from meadhall.db.schema import users
from tests.support.http import assert_error
from tests.support.shapes import USER_FIELDS, parse_ts

REGISTER = "/api/v1/auth/register"
PASSWORD = "correct horse battery staple"

SESSION_FIELDS = {
    "id", "created_at", "last_used_at", "expires_at", "ip", "user_agent", "method", "current",
    "step_up_expires_at",
}
TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$")
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def body(username: str = "alice", email: str | None = None, password: str = PASSWORD, **extra: Any
         ) -> dict[str, Any]:
    return {"username": username, "email": email or f"{username}@example.com", "password": password, **extra}


def detail_fields(r: Any) -> set[str]:
    err = assert_error(r, 422, "validation.failed")
    return {d["field"] for d in err["details"]}


async def test_register_answers_user_token_session_and_cookie(client, clock):
    r = await client.post(REGISTER, json=body("alice", "Alice.Smith@example.com"),
                          headers={"User-Agent": "meadhall-test/1.0"})
    assert r.status_code == 201, r.text
    data = r.json()
    assert set(data) == {"user", "token", "session", "totp_enabled"}
    assert TOKEN.match(data["token"])
    assert data["totp_enabled"] is False

    user = data["user"]
    assert set(user) == USER_FIELDS
    assert re.fullmatch(r"\d{1,19}", user["id"])
    assert user["username"] == "alice"
    assert user["email"] == "Alice.Smith@example.com"
    assert user["display_name"] == "alice"
    assert user["bio"] == ""
    assert user["status"] == "online"
    assert user["custom_status"] is None and user["custom_status_emoji"] is None
    assert user["locale"] == "en"
    assert user["timezone"] == "Europe/Moscow"
    assert user["totp_enabled"] is False
    assert user["onboarding_completed_at"] is None
    assert user["is_instance_admin"] is False
    assert user["badges"] == []
    assert user["avatar"] is None
    assert user["password_reset_required"] is False
    assert TS.match(user["created_at"]) and TS.match(user["last_seen_at"])
    assert abs(parse_ts(user["created_at"]) - clock.now()) < timedelta(seconds=1)

    session = data["session"]
    assert set(session) == SESSION_FIELDS
    assert session["id"] != user["id"] and session["id"] != data["token"]
    assert session["method"] == "password"
    assert session["current"] is True
    assert session["ip"] == "127.0.0.1"
    assert session["user_agent"] == "meadhall-test/1.0"
    created = parse_ts(session["created_at"])
    assert parse_ts(session["expires_at"]) - parse_ts(session["last_used_at"]) == timedelta(days=30)
    # A registration counts as a fresh sign-in: stepped up for 10 minutes (docs/architecture.md).
    assert parse_ts(session["step_up_expires_at"]) - created == timedelta(minutes=10)

    cookies = r.headers.get_list("set-cookie")
    assert cookies == [f"__Host-session={data['token']}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=2592000"]

    # The token really is a session: it authenticates as the new user.
    client.cookies.clear()
    me = await client.get("/api/v1/users/@me", headers={"Authorization": f"Bearer {data['token']}"})
    assert me.status_code == 200, me.text
    assert me.json()["user"] == {**user, "last_seen_at": me.json()["user"]["last_seen_at"]}


async def test_register_keeps_given_display_name_locale_and_timezone(client):
    r = await client.post(REGISTER, json=body("bob", display_name="Bob B.", locale="pt-BR", timezone="Asia/Tokyo"))
    assert r.status_code == 201, r.text
    user = r.json()["user"]
    assert (user["display_name"], user["locale"], user["timezone"]) == ("Bob B.", "pt-BR", "Asia/Tokyo")


async def test_tokens_are_distinct_per_registration(client):
    a = await client.post(REGISTER, json=body("alice"))
    b = await client.post(REGISTER, json=body("bob"))
    assert a.status_code == b.status_code == 201
    assert a.json()["token"] != b.json()["token"]
    assert a.json()["user"]["id"] != b.json()["user"]["id"]


@pytest.mark.parametrize("settings_overrides", [{"PUBLIC_URL": "https://chat.example.com"}])
async def test_cookie_is_secure_when_tls_is_on(client):
    r = await client.post(REGISTER, json=body())
    assert r.status_code == 201, r.text
    assert r.headers.get_list("set-cookie") == [
        f"__Host-session={r.json()['token']}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=2592000"
    ]
    client.cookies.clear()
    r = await client.post("/api/v1/auth/logout", headers={"Authorization": f"Bearer {r.json()['token']}"})
    assert r.status_code == 204
    assert r.headers.get_list("set-cookie") == ["__Host-session=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0"]


@pytest.mark.parametrize("settings_overrides", [{"REGISTRATION_ENABLED": False}])
async def test_registration_disabled_is_refused(client, rt):
    r = await client.post(REGISTER, json=body())
    assert_error(r, 403, "auth.registration_disabled")
    assert "set-cookie" not in r.headers
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(users))).scalar_one() == 0


async def test_username_is_unique_in_any_letter_case(client):
    assert (await client.post(REGISTER, json=body("Alice", "first@example.com"))).status_code == 201
    for taken in ("alice", "ALICE", "aLiCe"):
        r = await client.post(REGISTER, json=body(taken, f"{taken}-other@example.com"))
        assert_error(r, 409, "user.username_taken")
    # A different name is still free.
    assert (await client.post(REGISTER, json=body("alice2", "x@example.com"))).status_code == 201


async def test_email_is_unique_in_any_letter_case(client):
    assert (await client.post(REGISTER, json=body("first", "Mixed.Case@Example.com"))).status_code == 201
    r = await client.post(REGISTER, json=body("second", "mixed.case@EXAMPLE.COM"))
    assert_error(r, 409, "user.email_taken")


async def test_email_uniqueness_folds_cyrillic_letter_case(client):
    r = await client.post(REGISTER, json=body("hedgehog", "Ёжик@example.com"))
    assert r.status_code == 201, r.text
    assert r.json()["user"]["email"] == "Ёжик@example.com"
    for variant in ("ёжик@example.com", "ЁЖИК@Example.COM"):
        r = await client.post(REGISTER, json=body(f"other{len(variant)}", variant))
        assert_error(r, 409, "user.email_taken")
    # A different Cyrillic address is not a duplicate.
    assert (await client.post(REGISTER, json=body("yozh", "Ёжики@example.com"))).status_code == 201


async def test_username_conflict_is_reported_before_email_conflict(client):
    assert (await client.post(REGISTER, json=body("alice"))).status_code == 201
    r = await client.post(REGISTER, json=body("ALICE", "alice@example.com"))
    assert_error(r, 409, "user.username_taken")


async def test_password_too_short(client):
    r = await client.post(REGISTER, json=body(password="abcdefgh9"))  # 9 characters
    err = assert_error(r, 422, "validation.failed")
    assert err["details"] == [{"field": "password", "message": "too short"}]
    # Exactly 10 is enough.
    assert (await client.post(REGISTER, json=body(password="abcdefgh9x"))).status_code == 201


async def test_password_too_long(client):
    r = await client.post(REGISTER, json=body(password="x" * 257))
    assert detail_fields(r) == {"password"}
    assert (await client.post(REGISTER, json=body(password="xY7!" * 64))).status_code == 201  # 256


@pytest.mark.parametrize("password", ["1234567890", "qwertyuiop", "QWERTYUIOP", "QwErTyUiOp", "Password12"])
async def test_leaked_password_is_refused_in_any_case(client, password):
    r = await client.post(REGISTER, json=body(password=password))
    err = assert_error(r, 422, "validation.failed")
    assert err["details"] == [{"field": "password", "message": "too common"}]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"username": "a"}, "username"),
        ({"username": "x" * 33}, "username"),
        ({"username": "has space"}, "username"),
        ({"username": "Ёжик"}, "username"),
        ({"username": "at@sign"}, "username"),
        ({"email": "not-an-email"}, "email"),
        ({"email": "two@@example.com"}, "email"),
        ({"timezone": "Mars/Olympus_Mons"}, "timezone"),
        ({"timezone": "moscow"}, "timezone"),
        ({"locale": "EN"}, "locale"),
        ({"locale": "english-language-tag"}, "locale"),
        ({"display_name": ""}, "display_name"),
        ({"display_name": "d" * 33}, "display_name"),
        ({"password": None}, "password"),
    ],
)
async def test_invalid_fields_are_named(client, changes, field):
    r = await client.post(REGISTER, json={**body("valid_name"), **changes})
    assert detail_fields(r) == {field}
    assert "set-cookie" not in r.headers


async def test_missing_fields_are_named(client):
    r = await client.post(REGISTER, json={})
    assert detail_fields(r) == {"username", "email", "password"}


async def test_accepted_username_alphabet(client):
    r = await client.post(REGISTER, json=body("A.b_9", "ab9@example.com"))
    assert r.status_code == 201, r.text
    assert r.json()["user"]["username"] == "A.b_9"


@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"auth.register": "2/3600"}}])
async def test_register_rate_limit_per_address(client, clock):
    assert (await client.post(REGISTER, json=body("one"))).status_code == 201
    assert (await client.post(REGISTER, json=body("two"))).status_code == 201
    r = await client.post(REGISTER, json=body("three"))
    err = assert_error(r, 429, "rate_limited")
    assert err["bucket"] == "auth.register"
    assert err["retry_after"] == pytest.approx(1800, abs=1)
    assert r.headers["Retry-After"] == "1800"
    assert r.headers["X-RateLimit-Bucket"] == "auth.register"
    # The refused attempt created nothing; one token comes back after 30 minutes.
    clock.advance(1801)
    assert (await client.post(REGISTER, json=body("three"))).status_code == 201


async def test_concurrent_duplicate_registrations_get_409_not_500(client, rt):
    names = ["carol", "CAROL", "Carol", "cArOl", "caroL"]
    rs = await asyncio.gather(*(client.post(REGISTER, json=body(n, f"carol{i}@example.com"))
                                for i, n in enumerate(names)))
    client.cookies.clear()
    statuses = sorted(r.status_code for r in rs)
    assert statuses == [201, 409, 409, 409, 409], [r.text for r in rs]
    assert {r.json()["error"]["code"] for r in rs if r.status_code == 409} == {"user.username_taken"}
    rs = await asyncio.gather(*(client.post(REGISTER, json=body(f"dave{i}", "Dave@example.com")) for i in range(4)))
    assert sorted(r.status_code for r in rs) == [201, 409, 409, 409], [r.text for r in rs]
    assert {r.json()["error"]["code"] for r in rs if r.status_code == 409} == {"user.email_taken"}
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(users))).scalar_one() == 2

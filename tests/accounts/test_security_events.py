"""GET /users/@me/security-events (the OpenAPI document): what is recorded for each account action,
newest first, paged with `before` / `limit` and `has_more`, and only the caller's own events."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import update

from meadhall.db.schema import users
from tests.support.accounts import BACKUP_CODES, DISABLE, STEP_UP, enable_2fa, login, next_code, totp_code
from tests.support.http import assert_error

EVENTS = "/api/v1/users/@me/security-events"
EVENT_FIELDS = {"id", "user_id", "type", "ip", "user_agent", "data", "created_at"}
WRONG = "definitely the wrong password"


async def events_of(client: Any, account: Any, **params: Any) -> dict[str, Any]:
    r = await client.get(EVENTS, params=params, headers=account.headers)
    assert r.status_code == 200, r.text
    return r.json()


async def types_of(client: Any, account: Any) -> list[str]:
    return [e["type"] for e in (await events_of(client, account, limit=100))["security_events"]]


async def test_registration_is_recorded(client, accounts):
    a = await accounts.register("alice")
    data = await events_of(client, a)
    assert set(data) == {"security_events", "has_more"}
    assert data["has_more"] is False
    [ev] = data["security_events"]
    assert set(ev) == EVENT_FIELDS
    assert ev["type"] == "register"
    assert ev["user_id"] == a.id
    assert ev["ip"] == "127.0.0.1"
    assert ev["user_agent"].startswith("python-httpx/")
    assert ev["data"] == {}


async def test_sign_in_events_newest_first(client, accounts):
    a = await accounts.register("alice")
    assert_error(await login(client, "alice", WRONG), 401, "auth.invalid_credentials")
    r = await client.post("/api/v1/auth/login", json={"login": "alice", "password": a["password"]},
                          headers={"User-Agent": "Firefox/130"})
    client.cookies.clear()
    assert r.status_code == 200
    events = (await events_of(client, a))["security_events"]
    assert [e["type"] for e in events] == ["login.success", "login.failure", "register"]
    assert events[0]["user_agent"] == "Firefox/130"
    assert events[1]["data"] == {"reason": "invalid_credentials"}
    ids = [int(e["id"]) for e in events]
    assert ids == sorted(ids, reverse=True)
    assert events[0]["created_at"] >= events[1]["created_at"] >= events[2]["created_at"]


async def test_lockout_is_recorded(client, accounts):
    a = await accounts.register("alice")
    for _ in range(5):
        await login(client, "alice", WRONG)
    assert (await login(client, "alice", a["password"])).status_code == 429
    types = await types_of(client, a)
    assert types[0] == "login.locked"
    assert types.count("login.failure") == 5


async def test_second_factor_events(client, accounts, clock):
    a = await accounts.register("alice")
    secret, codes = await enable_2fa(client, a, clock)
    assert (await types_of(client, a))[0] == "2fa.enable"

    assert_error(await login(client, "alice", a["password"]), 401, "auth.2fa_required")
    assert_error(await login(client, "alice", a["password"], totp_code=totp_code(secret, clock, 9)), 401, "auth.invalid_code")
    assert (await login(client, "alice", a["password"], backup_code=codes[0])).status_code == 200
    events = (await events_of(client, a, limit=4))["security_events"]
    assert [e["type"] for e in events] == ["login.success", "2fa.backup_code_used", "login.failure",
                                          "login.failure"]
    assert events[2]["data"] == {"reason": "invalid_code"}
    assert events[3]["data"] == {"reason": "2fa_required"}

    assert (await client.post(BACKUP_CODES, headers=a.headers)).status_code == 200
    assert (await types_of(client, a))[0] == "2fa.backup_codes_regenerate"
    r = await client.post(DISABLE, json={"totp_code": next_code(secret, clock)}, headers=a.headers)
    assert r.status_code == 200, r.text
    assert (await types_of(client, a))[0] == "2fa.disable"


async def test_step_up_and_password_change_events(client, accounts, clock):
    a = await accounts.register("alice")
    clock.advance(601)
    assert (await client.post(STEP_UP, json={"password": WRONG}, headers=a.headers)).status_code == 401
    assert (await client.post(STEP_UP, json={"password": a["password"]}, headers=a.headers)).status_code == 200
    r = await client.post("/api/v1/auth/password", json={"new_password": "a whole new passphrase"},
                          headers=a.headers)
    assert r.status_code == 204
    types = await types_of(client, a)
    assert types[:3] == ["password.change", "step_up.success", "step_up.failure"]


async def test_session_revoke_and_logout_all_events(client, accounts):
    a = await accounts.register("alice")
    other = (await login(client, "alice", a["password"])).json()
    r = await client.delete(f"/api/v1/auth/sessions/{other['session']['id']}", headers=a.headers)
    assert r.status_code == 204
    events = (await events_of(client, a))["security_events"]
    assert events[0]["type"] == "session.revoke"
    assert events[0]["data"] == {"session_id": other["session"]["id"]}
    assert (await login(client, "alice", a["password"])).status_code == 200
    assert (await client.post("/api/v1/auth/logout-all", headers=a.headers)).status_code == 204
    relogged = (await login(client, "alice", a["password"])).json()
    r = await client.get(EVENTS, headers={"Authorization": f"Bearer {relogged['token']}"})
    assert [e["type"] for e in r.json()["security_events"][:3]] == ["login.success", "logout_all", "login.success"]


async def test_banned_sign_in_is_recorded(client, accounts, rt, clock):
    a = await accounts.register("alice")
    other = (await login(client, "alice", a["password"])).json()
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(a.id)).values(banned_at=clock.now()))
    assert_error(await login(client, "alice", a["password"]), 403, "user.banned")
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(a.id)).values(banned_at=None))
    r = await client.get(EVENTS, headers={"Authorization": f"Bearer {other['token']}"})
    [ev] = [e for e in r.json()["security_events"] if e["type"] == "login.failure"]
    assert ev["data"] == {"reason": "banned"}


async def test_only_own_events_are_listed(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    assert_error(await login(client, "bob", WRONG), 401, "auth.invalid_credentials")
    assert_error(await login(client, "nobody", WRONG), 401, "auth.invalid_credentials")
    events = (await events_of(client, a))["security_events"]
    assert [e["type"] for e in events] == ["register"]
    assert {e["user_id"] for e in (await events_of(client, b))["security_events"]} == {b.id}


async def test_paging_with_before_and_has_more(client, accounts):
    a = await accounts.register("alice")
    for _ in range(4):
        assert (await login(client, "alice", a["password"])).status_code == 200
    everything = (await events_of(client, a))["security_events"]
    assert len(everything) == 5
    page = await events_of(client, a, limit=2)
    assert page["has_more"] is True
    collected = list(page["security_events"])
    while page["has_more"]:
        page = await events_of(client, a, limit=2, before=collected[-1]["id"])
        assert 1 <= len(page["security_events"]) <= 2
        collected.extend(page["security_events"])
    assert collected == everything
    assert [len(p) for p in (collected[:2], collected[2:4], collected[4:])] == [2, 2, 1]
    # Exactly `limit` items left: has_more is false.
    last = await events_of(client, a, limit=2, before=everything[2]["id"])
    assert [e["id"] for e in last["security_events"]] == [everything[3]["id"], everything[4]["id"]]
    assert last["has_more"] is False
    # Before the oldest: nothing.
    empty = await events_of(client, a, before=everything[-1]["id"])
    assert empty == {"security_events": [], "has_more": False}


@pytest.mark.parametrize("params", [{"before": "abc"}, {"limit": "0"}, {"limit": "101"}, {"after": "1"}])
async def test_bad_paging_parameters(client, accounts, params):
    a = await accounts.register("alice")
    r = await client.get(EVENTS, params=params, headers=a.headers)
    err = assert_error(r, 422, "validation.failed")
    assert {d["field"] for d in err["details"]} == set(params)


async def test_security_events_require_a_session(client):
    assert_error(await client.get(EVENTS), 401, "auth.unauthorized")

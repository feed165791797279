"""Who may use the user administration routes, and the order of their checks (docs/admin.md, "Users"):
an administrator (403 `perm.denied`; unsigned 401), a known account (404 `user.not_found`), a fresh step-up
for every action (403 `auth.step_up_required`), then each action's rules."""

from __future__ import annotations

import pytest

from tests.support.admin import admin_account, user_url
from tests.support.http import assert_error

# (method, path after /instance/users/{id}, body); "" with GET on the list is the list itself.
ACTIONS = [
    ("POST", "/ban", {"reason": "spam"}),
    ("POST", "/unban", None),
    ("DELETE", "/sessions/{session}", None),
    ("POST", "/reset-2fa", None),
    ("POST", "/temporary-password", None),
    ("POST", "/logout-all", None),
    ("PUT", "/admin", None),
    ("DELETE", "/admin", None),
]
ROUTES = [("GET", "LIST", None), ("GET", "", None), *ACTIONS]


def _url(path: str, target: dict, session_id: str) -> str:
    if path == "LIST":
        return "/instance/users"
    return user_url(target["user"]["id"], path.replace("{session}", session_id))


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
async def test_non_admin_is_refused_and_unsigned_is_401(api, client, accounts, rt, method, path, body):
    await admin_account(client, accounts, rt, "root")
    someone = await accounts.register("someone")
    target = await accounts.register("target")
    url = _url(path, target, target["session"]["id"])
    r = await api.request(method, url, someone, json=body, expect=None)
    assert_error(r, 403, "perm.denied")
    r = await api.request(method, url, None, json=body, expect=None)
    assert_error(r, 401, "auth.unauthorized")
    # Nothing happened to the target.
    me = await api.get("/users/@me", target)
    assert me["user"]["is_instance_admin"] is False


@pytest.mark.parametrize(("method", "path", "body"), ACTIONS, ids=[f"{m} {p}" for m, p, _ in ACTIONS])
async def test_every_action_needs_a_fresh_step_up(api, client, accounts, rt, clock, method, path, body):
    admin = await admin_account(client, accounts, rt, "root")
    target = await accounts.register("target")
    clock.advance(601)
    url = _url(path, target, target["session"]["id"])
    assert_error(await api.request(method, url, admin, json=body, expect=None), 403, "auth.step_up_required")
    # The lookup comes first: an unknown account is 404 even without the step-up.
    for unknown in ("1", "x", "99999999999999999999"):
        r = await api.request(method, user_url(unknown, path.replace("{session}", "1")), admin, json=body,
                              expect=None)
        assert_error(r, 404, "user.not_found")
    # A non-administrator's answer is 403 perm.denied whatever the target.
    someone = await accounts.register("someone")
    assert_error(await api.request(method, user_url("1", path.replace("{session}", "1")), someone, json=body,
                                   expect=None), 403, "perm.denied")


async def test_rules_come_after_the_step_up(api, client, accounts, rt, clock):
    admin = await admin_account(client, accounts, rt, "root")
    other = await admin_account(client, accounts, rt, "second")
    clock.advance(601)
    # Banning oneself or another administrator is refused, but the step-up is asked for first.
    for target in (admin, other):
        r = await api.request("POST", user_url(target.id, "/ban"), admin, json={"reason": "x"}, expect=None)
        assert_error(r, 403, "auth.step_up_required")
    r = await api.request("DELETE", user_url(admin.id, "/sessions/1"), admin, expect=None)
    assert_error(r, 404, "session.not_found")  # a lookup: before the step-up


async def test_detail_and_list_need_no_step_up(api, client, accounts, rt, clock):
    admin = await admin_account(client, accounts, rt, "root")
    target = await accounts.register("target")
    clock.advance(601)
    assert (await api.get(user_url(target.id), admin))["user"]["id"] == target.id
    assert (await api.get("/instance/users", admin))["total"] == 2
    assert_error(await api.request("GET", user_url("123"), admin, expect=None), 404, "user.not_found")
    assert_error(await api.request("GET", user_url("abc"), admin, expect=None), 404, "user.not_found")


@pytest.mark.parametrize("body", [{}, {"reason": ""}, {"reason": "   "}, {"reason": "x" * 513},
                                  {"reason": "two\nlines"}, {"reason": 5}])
async def test_ban_reason_is_required_and_bounded(api, client, accounts, rt, body):
    admin = await admin_account(client, accounts, rt, "root")
    target = await accounts.register("target")
    r = await api.request("POST", user_url(target.id, "/ban"), admin, json=body, expect=None)
    err = assert_error(r, 422, "validation.failed")
    assert err["details"][0]["field"] == "reason"

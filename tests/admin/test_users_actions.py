"""The actions on one account besides the ban (docs/admin.md, "Users"; OpenAPI: revokeInstanceUserSession,
resetInstanceUser2fa, setInstanceUserTemporaryPassword, logoutInstanceUserEverywhere, grantInstanceAdmin,
revokeInstanceAdmin): what each changes, the events and audit entries it writes, and its refusals."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from meadhall.db.schema import audit_log, security_events
from tests.support.accounts import enable_2fa, login, second_session
from tests.support.admin import admin_account, sign_in_admin, user_url
from tests.support.http import assert_error


async def instance_audit(rt: Any, action: str) -> list[dict[str, Any]]:
    async with rt.engine.connect() as conn:
        rows = await conn.execute(select(audit_log).where(audit_log.c.action == action,
                                                          audit_log.c.guild_id.is_(None)).order_by(audit_log.c.id))
        return [dict(r) for r in rows.mappings()]


async def security_of(rt: Any, account: Any, type_: str) -> list[dict[str, Any]]:
    async with rt.engine.connect() as conn:
        rows = await conn.execute(select(security_events).where(security_events.c.user_id == int(account.id),
                                                                security_events.c.type == type_))
        return [dict(r) for r in rows.mappings()]


async def works(api: Any, token: str) -> int:
    r = await api.request("GET", "/users/@me", None, headers={"Authorization": f"Bearer {token}"}, expect=None)
    return r.status_code


async def invalidated(capture_events: Any) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
    await capture_events.settle()
    return [(e.users, e.data) for e in capture_events.of_type("SESSION_INVALIDATED")]


# ---- one device ----------------------------------------------------------------------------------------

async def test_revoke_one_session(api, client, accounts, rt, capture_events):
    admin = await admin_account(client, accounts, rt, "root")
    target = await accounts.register("target")
    other = await second_session(client, target)
    stranger = await accounts.register("stranger")
    await capture_events.reset()

    await api.delete(user_url(target.id, f"/sessions/{other['session']['id']}"), admin)
    assert await works(api, other["token"]) == 401
    assert await works(api, target["token"]) == 200
    assert await invalidated(capture_events) == [
        ((int(target.id),), {"reason": "admin_action", "session_id": other["session"]["id"]})]
    [entry] = await instance_audit(rt, "instance.user_session_revoke")
    assert entry["target_type"] == "session" and entry["target_id"] == int(other["session"]["id"])
    assert entry["actor_id"] == int(admin.id) and entry["data"] == {"user_id": target.id}

    for session_id in (other["session"]["id"], stranger["session"]["id"], "abc"):
        r = await api.request("DELETE", user_url(target.id, f"/sessions/{session_id}"), admin, expect=None)
        assert_error(r, 404, "session.not_found")
    assert await works(api, stranger["token"]) == 200


async def test_logout_everywhere(api, client, accounts, rt, capture_events):
    admin = await admin_account(client, accounts, rt, "root")
    target = await accounts.register("target")
    other = await second_session(client, target)
    await capture_events.reset()
    await api.post(user_url(target.id, "/logout-all"), admin, expect=204)
    assert await works(api, target["token"]) == 401 and await works(api, other["token"]) == 401
    got = await invalidated(capture_events)
    assert sorted(d["session_id"] for _, d in got) == sorted([target["session"]["id"], other["session"]["id"]])
    assert {d["reason"] for _, d in got} == {"admin_action"}
    [entry] = await instance_audit(rt, "instance.user_logout_all")
    assert entry["target_type"] == "user" and entry["target_id"] == int(target.id)
    assert (await api.get(user_url(target.id), admin))["user"]["session_count"] == 0
    assert await works(api, admin["token"]) == 200


# ---- second factor ----------------------------------------------------------------------------------

async def test_reset_2fa_of_a_member(api, client, accounts, rt, clock, capture_events):
    admin = await admin_account(client, accounts, rt, "root")
    target = await accounts.register("target")
    secret, _ = await enable_2fa(client, target, clock)
    await capture_events.reset()

    body = await api.post(user_url(target.id, "/reset-2fa"), admin, expect=200)
    assert body["user"]["totp_enabled"] is False
    await capture_events.settle()
    [ev] = capture_events.of_type("USER_UPDATE")
    assert ev.users == (int(target.id),) and ev.data["totp_enabled"] is False
    assert capture_events.of_type("SESSION_INVALIDATED") == []  # a member keeps their sessions
    assert await works(api, target["token"]) == 200
    assert (await login(client, "target", target["password"])).status_code == 200  # no code asked any more
    [event] = await security_of(rt, target, "2fa.reset")
    assert event["data"] == {"by": "admin"}
    [entry] = await instance_audit(rt, "instance.user_reset_2fa")
    assert entry["actor_id"] == int(admin.id) and entry["target_id"] == int(target.id)

    r = await api.request("POST", user_url(target.id, "/reset-2fa"), admin, expect=None)
    assert_error(r, 409, "auth.2fa_not_enabled")


async def test_reset_2fa_of_administrators(api, client, accounts, rt, clock):
    admin = await admin_account(client, accounts, rt, "root")
    other = await admin_account(client, accounts, rt, "second")
    r = await api.request("POST", user_url(other.id, "/reset-2fa"), admin, expect=None)
    assert_error(r, 403, "perm.denied")
    assert (await api.get("/users/@me", other))["user"]["totp_enabled"] is True
    # One's own: allowed; an administrator's sessions go with the factor they were opened with.
    body = await api.post(user_url(admin.id, "/reset-2fa"), admin, expect=200)
    assert body["user"]["totp_enabled"] is False and body["user"]["session_count"] == 0
    assert await works(api, admin["token"]) == 401
    assert_error(await login(client, "root", admin["password"]), 403, "auth.2fa_enrollment_required")


# ---- temporary password --------------------------------------------------------------------------------

async def test_temporary_password(api, client, accounts, rt, capture_events):
    admin = await admin_account(client, accounts, rt, "root")
    target = await accounts.register("target")
    await capture_events.reset()
    r = await api.request("POST", user_url(target.id, "/temporary-password"), admin, expect=200)
    assert r.headers["cache-control"] == "no-store"
    password = r.json()["password"]
    assert set(r.json()) == {"password"} and len(password) == 20 and password.isalnum()

    assert await works(api, target["token"]) == 401
    assert [d["reason"] for _, d in await invalidated(capture_events)] == ["admin_action"]
    assert_error(await login(client, "target", target["password"]), 401, "auth.invalid_credentials")
    signed = await login(client, "target", password)
    assert signed.status_code == 200 and signed.json()["user"]["password_reset_required"] is True
    token = signed.json()["token"]
    [event] = await security_of(rt, target, "password.reset")
    assert event["data"] == {"by": "admin"}
    [entry] = await instance_audit(rt, "instance.user_temp_password")
    assert entry["actor_id"] == int(admin.id) and entry["target_id"] == int(target.id)
    assert password not in str(entry)

    # Changing it clears the flag.
    await api.post("/auth/password", None, headers={"Authorization": f"Bearer {token}"},
                   json={"new_password": "a brand new long password"}, expect=204)
    me = await login(client, "target", "a brand new long password")
    assert me.json()["user"]["password_reset_required"] is False


async def test_temporary_password_of_administrators(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    other = await admin_account(client, accounts, rt, "second")
    r = await api.request("POST", user_url(other.id, "/temporary-password"), admin, expect=None)
    assert_error(r, 403, "perm.denied")
    assert await works(api, other["token"]) == 200
    assert await instance_audit(rt, "instance.user_temp_password") == []
    # One's own is allowed (and signs oneself out).
    r = await api.request("POST", user_url(admin.id, "/temporary-password"), admin, expect=200)
    assert len(r.json()["password"]) == 20
    assert await works(api, admin["token"]) == 401


# ---- administrators --------------------------------------------------------------------------------

async def test_grant_deletes_sessions_and_needs_the_second_factor(api, client, accounts, rt, clock, capture_events):
    admin = await admin_account(client, accounts, rt, "root")
    target = await accounts.register("target")
    await capture_events.reset()
    body = await api.put(user_url(target.id, "/admin"), admin, expect=200)
    assert body["user"]["is_instance_admin"] is True and body["user"]["badges"] == ["instance_admin"]
    assert body["user"]["session_count"] == 0
    assert await works(api, target["token"]) == 401
    assert [d["reason"] for _, d in await invalidated(capture_events)] == ["admin_action"]
    [entry] = [e for e in await instance_audit(rt, "instance.admin_grant") if e["target_id"] == int(target.id)]
    assert entry["actor_id"] == int(admin.id)
    assert_error(await login(client, "target", target["password"]), 403, "auth.2fa_enrollment_required")
    # Granting again changes nothing.
    await api.put(user_url(target.id, "/admin"), admin, expect=200)
    assert [e["target_id"] for e in await instance_audit(rt, "instance.admin_grant")] == [int(admin.id),
                                                                                           int(target.id)]


async def test_remove_administrator_and_never_the_last(api, client, accounts, rt, capture_events):
    admin = await admin_account(client, accounts, rt, "root")
    other = await admin_account(client, accounts, rt, "second")
    member = await accounts.register("member")
    await capture_events.reset()
    body = await api.delete(user_url(other.id, "/admin"), admin, expect=200)
    assert body["user"]["is_instance_admin"] is False and body["user"]["badges"] == []
    await capture_events.settle()
    [ev] = capture_events.of_type("USER_UPDATE")
    assert ev.users == (int(other.id),) and ev.data["is_instance_admin"] is False
    assert capture_events.of_type("SESSION_INVALIDATED") == []  # removal deletes no session
    me = await api.get("/users/@me", other)
    assert me["user"]["is_instance_admin"] is False
    assert_error(await api.request("GET", "/instance/users", other, expect=None), 403, "perm.denied")
    [entry] = await instance_audit(rt, "instance.admin_revoke")
    assert entry["actor_id"] == int(admin.id) and entry["target_id"] == int(other.id)

    # Not an administrator: nothing to remove, nothing written.
    body = await api.delete(user_url(member.id, "/admin"), admin, expect=200)
    assert body["user"]["is_instance_admin"] is False
    assert len(await instance_audit(rt, "instance.admin_revoke")) == 1

    # The last administrator stays one.
    r = await api.request("DELETE", user_url(admin.id, "/admin"), admin, expect=None)
    assert_error(r, 409, "instance.last_admin")
    assert (await api.get("/users/@me", admin))["user"]["is_instance_admin"] is True


async def test_an_administrator_may_remove_their_own_administration(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    other = await admin_account(client, accounts, rt, "second")
    body = await api.delete(user_url(admin.id, "/admin"), admin, expect=200)
    assert body["user"]["is_instance_admin"] is False
    assert_error(await api.request("DELETE", user_url(other.id, "/admin"), admin, expect=None), 403, "perm.denied")
    assert_error(await api.request("DELETE", user_url(other.id, "/admin"), other, expect=None), 409,
                 "instance.last_admin")
    await sign_in_admin(client, rt, other)  # still signs in as an administrator
    assert (await api.get("/instance/users", other))["total"] == 2

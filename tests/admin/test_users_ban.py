"""Instance ban and unban (docs/admin.md, "Users"; OpenAPI: banInstanceUser, unbanInstanceUser): who may be
banned, what a ban takes away (sessions and their gateway connections, sign-in by password and passkey,
voice rooms and calls) and what unbanning gives back. Voice runs against the media-server stand-in; the
gateway is a real server (uvicorn on a loopback port)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select, update

from meadhall.db.schema import audit_log, users
from tests.support.accounts import login
from tests.support.admin import admin_account, user_url
from tests.support.calls import conversation, ongoing, participant
from tests.support.calls import join as join_call
from tests.support.calls import start as start_call
from tests.support.factories import audit_rows
from tests.support.http import assert_error
from tests.support.livekit_standin import StandIn
from tests.support.passkeys import add_passkey, passkey_login
from tests.support.personas import hall
from tests.support.voice import join, room_name, stored, voice_room, voice_settings
from tests.support.webauthn import Authenticator


@pytest.fixture
def settings_overrides(standin: StandIn) -> dict[str, Any]:
    return voice_settings(standin.url)


async def ban(api: Any, admin: Any, target: Any, reason: str = "spam", *, expect: int = 200) -> Any:
    """The body on success, else the response (for assert_error)."""
    r = await api.request("POST", user_url(target.id, "/ban"), admin, json={"reason": reason}, expect=expect)
    return r.json() if expect == 200 else r


async def instance_audit(rt: Any, action: str) -> list[dict[str, Any]]:
    """Instance-level entries (guild_id null) of one action."""
    async with rt.engine.connect() as conn:
        rows = await conn.execute(select(audit_log).where(audit_log.c.action == action,
                                                          audit_log.c.guild_id.is_(None)).order_by(audit_log.c.id))
        return [dict(r) for r in rows.mappings()]


async def test_ban_records_revokes_and_refuses_sign_in(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    target = await accounts.register("target")
    authenticator = Authenticator()
    await add_passkey(client, target, authenticator)

    body = await ban(api, admin, target, "  repeated spam  ")
    user = body["user"]
    assert user["id"] == target.id and user["ban_reason"] == "repeated spam" and user["banned_at"]
    assert user["banned_by"]["id"] == admin.id and user["session_count"] == 0
    [entry] = await instance_audit(rt, "instance.user_ban")
    assert entry["actor_id"] == int(admin.id) and entry["target_type"] == "user"
    assert entry["target_id"] == int(target.id) and entry["reason"] == "repeated spam"

    # The old session is gone; password and passkey sign-in are refused with user.banned.
    assert_error(await api.request("GET", "/users/@me", target, expect=None), 401, "auth.unauthorized")
    assert_error(await login(client, "target", target["password"]), 403, "user.banned")
    assert_error(await passkey_login(client, authenticator), 403, "user.banned")

    assert_error(await ban(api, admin, target, expect=409), 409, "user.already_banned")
    assert len(await instance_audit(rt, "instance.user_ban")) == 1

    body = await api.post(user_url(target.id, "/unban"), admin, expect=200)
    assert body["user"]["banned_at"] is None and body["user"]["ban_reason"] is None
    assert body["user"]["banned_by"] is None
    [entry] = await instance_audit(rt, "instance.user_unban")
    assert entry["actor_id"] == int(admin.id) and entry["target_id"] == int(target.id)
    assert (await login(client, "target", target["password"])).status_code == 200
    assert (await passkey_login(client, authenticator)).status_code == 200
    r = await api.request("POST", user_url(target.id, "/unban"), admin, expect=None)
    assert_error(r, 409, "user.not_banned")


async def test_neither_oneself_nor_an_administrator_can_be_banned(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    other = await admin_account(client, accounts, rt, "second")
    for target in (admin, other):
        err = assert_error(await ban(api, admin, target, expect=403), 403, "perm.denied")
        assert err["permission"] is None
    assert (await api.get("/instance/users", admin, params={"banned": "true"}))["total"] == 0
    assert await instance_audit(rt, "instance.user_ban") == []
    assert (await api.get("/users/@me", other))["user"]["id"] == other.id  # untouched


async def test_a_banned_session_presented_gets_user_banned_once(api, client, accounts, rt):
    """A session of a banned account that escaped the revocation (written around the service) is refused
    with user.banned and deleted; the next use is 401."""
    admin = await admin_account(client, accounts, rt, "root")
    target = await accounts.register("target")
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(target.id))
                           .values(banned_at=rt.clock.now(), ban_reason="x", banned_by=int(admin.id)))
    assert_error(await api.request("GET", "/users/@me", target, expect=None), 403, "user.banned")
    assert_error(await api.request("GET", "/users/@me", target, expect=None), 401, "auth.unauthorized")


async def test_ban_invalidates_gateway_connections_then_closes_4010(api, client, accounts, rt, gateway):
    admin = await admin_account(client, accounts, rt, "root")
    target = await accounts.register("target")
    bystander = await accounts.register("bystander")
    conn = await gateway.identified(target["token"])
    other = await gateway.identified(bystander["token"])

    await ban(api, admin, target)
    invalidated = await conn.dispatch("SESSION_INVALIDATED")
    assert invalidated == {"reason": "banned", "session_id": target["session"]["id"]}
    assert await conn.wait_closed() == 4010
    await other.no_dispatch("SESSION_INVALIDATED")
    assert other.closed_code is None

    # The old token no longer opens a connection.
    again = await gateway.connect()
    hello = await again.recv()
    assert hello["op"] == 10
    await again.send(2, {"token": target["token"]})
    assert await again.wait_closed() == 4004


async def test_ban_clears_voice_states_and_media_server_participation(api, client, accounts, rt, standin,
                                                                      capture_events):
    admin = await admin_account(client, accounts, rt, "root")
    h = await hall(client, accounts, rt)
    lounge = await voice_room(client, h.owner, h.id)
    await join(api, h.a, lounge)
    await join(api, h.b, lounge)
    assert await stored(rt, h.a) is not None
    await capture_events.reset()

    await ban(api, admin, h.a)
    assert await stored(rt, h.a) is None
    assert (await stored(rt, h.b)).channel_id == lounge  # the others stay
    await capture_events.settle()
    [ev] = capture_events.of_type("VOICE_STATE_UPDATE")
    assert ev.data["channel_id"] is None and ev.data["user_id"] == h.a.id
    assert set(ev.users) >= {int(h.owner.id), int(h.b.id)}
    assert [(c.room, c.identity) for c in standin.of("RemoveParticipant")] == [(room_name(h.id, lounge), h.a.id)]
    states = (await api.get(f"/guilds/{h.id}/voice-states", h.owner))["voice_states"]
    assert [s["user_id"] for s in states] == [h.b.id]
    assert len(await audit_rows(rt, h.id, "voice.disconnect")) == 0  # an instance ban, not a guild moderation


async def test_ban_ends_call_participation(api, client, accounts, rt, standin):
    admin = await admin_account(client, accounts, rt, "root")
    h = await hall(client, accounts, rt)
    cid = await conversation(api, h.a, h.b, h.owner)
    await start_call(api, h.a, cid)
    await join_call(api, h.b, cid)
    await join_call(api, h.owner, cid)

    await ban(api, admin, h.b)
    call = await ongoing(api, h.a, cid)
    assert participant(call, h.b)["state"] == "left"
    assert participant(call, h.a)["state"] == "joined" and call["status"] == "active"
    assert (f"dm_{cid}", h.b.id) in [(c.room, c.identity) for c in standin.of("RemoveParticipant")]

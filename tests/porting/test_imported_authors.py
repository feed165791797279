"""Imported authors (docs/imported-authors.md): the `imported` badge wherever they are shown, never online,
and every path that would sign in as one or reach one refused with 403 `user.imported`, each next to the same
call succeeding for a local account."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select

from meadhall.db.schema import sessions
from tests.support.accounts import enable_2fa, login
from tests.support.admin import admin_account, user_url
from tests.support.conversations import add_recipient, group, open_dm
from tests.support.factories import add_member
from tests.support.guilds import make_guild
from tests.support.http import assert_error
from tests.support.imported import authored_message, imported_author, make_imported, meadhall
from tests.support.passkeys import add_passkey, passkey_login, security_events_of
from tests.support.personas import PASSWORD
from tests.support.social import request_friend, set_relationship
from tests.support.webauthn import Authenticator


def refused(body: Any) -> None:
    assert body["error"]["code"] == "user.imported", body


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"RATE_LIMITS": {"auth.passkey": "1000/60", "auth.login": "1000/60"}}


# ---- shown with the badge, never online --------------------------------------------------------------------


async def test_profile_shows_the_badge_and_offline_though_just_written(api, accounts, rt):
    local = await accounts.register("local")
    ghost = await imported_author(rt, "old_timer", display_name="Old Timer")
    shown = (await api.get(f"/users/{ghost.id}", local))["user"]
    assert shown["badges"] == ["imported"]
    # The import wrote last_seen_at a moment ago, which would read as online for anyone else.
    assert shown["status"] == "offline" and shown["custom_status"] is None
    assert shown["display_name"] == "Old Timer" and shown["deleted"] is False
    mine = (await api.get(f"/users/{local.id}", local))["user"]
    assert mine["badges"] == [] and mine["status"] == "online"


async def test_member_list_and_message_author_carry_the_badge(api, client, accounts, rt):
    owner = await accounts.register("owner")
    guild = await make_guild(client, owner)
    ghost = await imported_author(rt, "old_timer", guild["id"])
    await authored_message(rt, guild["system_channel_id"], ghost.id, "from the old place")
    listed = {m["user"]["id"]: m["user"] for m in (await api.get(f"/guilds/{guild['id']}/members", owner))["members"]}
    assert listed[ghost.id]["badges"] == ["imported"] and listed[ghost.id]["status"] == "offline"
    assert listed[owner.id]["badges"] == []
    history = await api.get(f"/channels/{guild['system_channel_id']}/messages", owner)
    [theirs] = [m for m in history["messages"] if m["content"] == "from the old place"]
    assert theirs["author"]["id"] == ghost.id and theirs["author"]["badges"] == ["imported"]


# ---- no sign-in -----------------------------------------------------------------------------------------


async def test_password_sign_in_is_refused_whatever_the_password(client, accounts, rt):
    ghost = await imported_author(rt, "old_timer")
    for password in (PASSWORD, "!", ""):
        r = await login(client, "old_timer", password or "x")
        assert_error(r, 403, "user.imported")
    r = await login(client, "OLD_TIMER", PASSWORD)  # the username in any letter case names it
    assert_error(r, 403, "user.imported")
    async with rt.read() as uow:
        assert (await uow.conn.execute(select(sessions.c.id).where(sessions.c.user_id == int(ghost.id)))).all() == []
    assert (int(ghost.id), {"reason": "imported"}) in await security_events_of(rt, "login.failure")
    local = await accounts.register("local")
    assert (await login(client, "local", PASSWORD)).status_code == 200
    assert (await login(client, local["user"]["email"], PASSWORD)).status_code == 200


async def test_an_imported_author_has_no_email_to_sign_in_with(client, rt):
    """Its stored address is the empty string and its index a placeholder: neither names it."""
    ghost = await imported_author(rt, "old_timer")
    for typed in (f"imported:{ghost.id}", f"imported:{ghost.id}@example.com", "@"):
        assert_error(await login(client, typed, PASSWORD), 401, "auth.invalid_credentials")


async def test_passkey_sign_in_is_refused(client, accounts, rt):
    local = await accounts.register("keyholder")
    key = Authenticator()
    await add_passkey(client, local, key)
    assert (await passkey_login(client, key)).status_code == 200
    await make_imported(rt, local.id)
    r = await passkey_login(client, key)
    assert_error(r, 403, "user.imported")


# ---- nobody reaches one -------------------------------------------------------------------------------


async def test_friend_requests_are_refused_by_username_and_by_id(api, accounts, rt):
    me = await accounts.register("me")
    friend = await accounts.register("friend")
    ghost = await imported_author(rt, "old_timer")
    refused(await api.post("/users/@me/relationships", me, json={"username": "old_timer"}, expect=403))
    refused(await set_relationship(api, me, ghost, "friend", expect=403))
    assert (await request_friend(api, me, friend))["type"] == "outgoing"
    # Blocking one reaches nobody and stays possible.
    assert (await set_relationship(api, me, ghost, "blocked"))["type"] == "blocked"
    relationships = await api.get("/users/@me/relationships", me)
    assert [r["user"]["id"] for r in relationships["outgoing"]] == [friend.id]


async def test_direct_conversations_refuse_an_imported_author(api, accounts, rt):
    me = await accounts.register("me")
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    ghost = await imported_author(rt, "old_timer")
    refused(await open_dm(api, me, ghost, expect=403))
    refused(await group(api, me, a, ghost, expect=403))
    conversation = await group(api, me, a, b)
    refused(await add_recipient(api, me, conversation, ghost, expect=403))
    one_to_one = await open_dm(api, me, a)
    refused(await add_recipient(api, me, one_to_one, ghost, expect=403))
    c = await accounts.register("carol")
    assert c.id in {p["id"] for p in (await add_recipient(api, me, conversation, c))["members"]}
    assert [x["id"] for x in (await api.get("/users/@me/channels", me))["channels"]].count(conversation["id"]) == 1


async def test_a_private_message_in_a_room_to_an_imported_author_is_refused(api, client, accounts, rt):
    owner = await accounts.register("owner")
    guild = await make_guild(client, owner)
    member = await accounts.register("member")
    await add_member(rt, guild["id"], member)
    ghost = await imported_author(rt, "old_timer", guild["id"])
    room = guild["system_channel_id"]
    r = await client.post(f"/api/v1/channels/{room}/messages", headers=owner.headers,
                          json={"content": f"/ls <@{ghost.id}> are you there?"})
    assert r.status_code == 403, r.text
    refused(r.json())
    sent = await api.post(f"/channels/{room}/messages", owner, json={"content": f"/ls <@{member.id}> you are"}, expect=201)
    assert sent["message"]["kind"] == "private" and sent["message"]["recipient_id"] == member.id


# ---- instance administration ----------------------------------------------------------------------------


async def test_administration_cannot_open_a_way_in(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    ghost = await imported_author(rt, "old_timer")
    for path, method in (("/temporary-password", "POST"), ("/reset-2fa", "POST"), ("/admin", "PUT")):
        r = await api.request(method, user_url(ghost.id, path), admin, expect=403)
        assert_error(r, 403, "user.imported")
    detail = (await api.get(user_url(ghost.id), admin))["user"]
    assert detail["is_instance_admin"] is False and detail["badges"] == ["imported"]
    assert detail["password_reset_required"] is False and detail["session_count"] == 0
    # The same calls for a local account do what they say.
    local = await accounts.register("local")
    await enable_2fa(client, local, rt.clock)
    assert "password" in await api.post(user_url(local.id, "/temporary-password"), admin, expect=200)
    assert (await api.post(user_url(local.id, "/reset-2fa"), admin, expect=200))["user"]["totp_enabled"] is False
    assert (await api.put(user_url(local.id, "/admin"), admin, expect=200))["user"]["is_instance_admin"] is True
    # Banning and deleting stay possible: they open nothing.
    banned = await api.post(user_url(ghost.id, "/ban"), admin, json={"reason": "spam"}, expect=200)
    assert banned["user"]["banned_at"] is not None and banned["user"]["badges"] == ["imported"]


async def test_the_user_list_filters_imported_authors(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    await accounts.register("local")
    first = await imported_author(rt, "old_timer")
    second = await imported_author(rt, "older_timer")
    only = await api.get("/instance/users", admin, params={"imported": "true"})
    assert [u["id"] for u in only["users"]] == [second.id, first.id]
    assert only["total"] == 2 and only["has_more"] is False
    assert all(u["badges"] == ["imported"] and u["email"] == "" for u in only["users"])
    searched = await api.get("/instance/users", admin, params={"imported": "true", "q": "older"})
    assert [u["id"] for u in searched["users"]] == [second.id] and searched["total"] == 1
    everyone = await api.get("/instance/users", admin, params={"imported": "false"})
    assert everyone["total"] == 4
    assert {u["username"]: u["badges"] for u in everyone["users"]}["root"] == ["instance_admin"]
    await api.get("/instance/users", admin, params={"imported": "yes"}, expect=422)
    local = await accounts.register("nosy")
    await api.get("/instance/users", local, params={"imported": "true"}, expect=403)


async def test_the_operators_account_commands_refuse_an_imported_author(accounts, rt, settings):
    """`make-admin`, `reset-password`, `totp-setup` find accounts by email, which an imported author lacks;
    an account marked imported is refused all the same, while a local one is served."""
    marked = await accounts.register("marked")
    await accounts.register("local")
    await make_imported(rt, marked.id)
    for command in (("make-admin",), ("reset-password",), ("totp-setup",)):
        r = await meadhall(settings, *command, "--email", "marked@example.com")
        assert r.exit_code == 1 and json.loads(r.stderr.strip().splitlines()[-1])["error"]["code"] == "user.imported"
        assert (await meadhall(settings, *command, "--email", "local@example.com")).exit_code == 0

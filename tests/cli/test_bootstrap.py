"""`meadhall bootstrap-admin` (SPEC rule 2, docs/operations.md, docs/reference/permissions.md): checked through its output, through HTTP
after the administrator enrolls 2FA, and by counting rows on a second run."""

from __future__ import annotations

import pyotp
from sqlalchemy import func, select

from meadhall.core import permissions as perms
from meadhall.db.schema import audit_log, channels, guilds, member_roles, members, messages, roles, users
from meadhall.guilds.service import snapshot
from tests.support.accounts import login

API = "/api/v1"


async def counts(rt):
    async with rt.engine.connect() as conn:
        result = {}
        for table in (users, guilds, roles, channels, members, member_roles, audit_log):
            result[table.name] = (await conn.execute(select(func.count()).select_from(table))).scalar_one()
    return result


async def sign_in_admin(cli, client, login_value, email, password):
    r = await login(client, login_value, password)
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "auth.2fa_enrollment_required"
    assert r.json()["error"]["hint"] == f"meadhall totp-setup --email {email}"
    setup = await cli("totp-setup", "--email", email)
    assert setup.exit_code == 0, setup.stderr
    ok = await login(client, login_value, password, totp_code=pyotp.TOTP(setup.json["secret"]).now())
    assert ok.status_code == 200, ok.text
    return ok.json()


async def test_bootstrap_creates_admin_and_main_server(cli, client, rt):
    r = await cli("bootstrap-admin", "--username", "root", "--email", "root@example.com",
                  env={"REGISTRATION_ENABLED": "false"})
    assert r.exit_code == 0, r.stderr
    out = r.json
    assert list(out) == ["status", "user_id", "guild_id", "channel_id", "password", "next"]
    assert out["status"] == "created"
    assert out["next"] == "meadhall totp-setup --email root@example.com"
    password = out["password"]
    assert len(password) == 20 and password.isalnum()

    signed = await sign_in_admin(cli, client, "root", "root@example.com", password)
    user, headers = signed["user"], {"Authorization": f"Bearer {signed['token']}"}
    assert user["id"] == out["user_id"] and user["is_instance_admin"] is True
    assert user["badges"] == ["instance_admin"] and user["username"] == "root"

    [guild] = (await client.get(f"{API}/users/@me/guilds", headers=headers)).json()["guilds"]
    assert guild["id"] == out["guild_id"] and guild["name"] == "Main"
    assert guild["is_main"] is True and guild["owner_id"] == user["id"] and guild["member_count"] == 1
    assert guild["system_channel_id"] == out["channel_id"]
    [room] = (await client.get(f"{API}/guilds/{guild['id']}/channels", headers=headers)).json()["channels"]
    assert (room["id"], room["name"], room["type"], room["parent_id"]) == (out["channel_id"], "general", "text", None)
    async with rt.engine.connect() as conn:
        posted = (await conn.execute(select(messages.c.kind, messages.c.system_event, messages.c.content)
                                     .where(messages.c.channel_id == int(room["id"])))).mappings().all()
    assert [(m["kind"], m["system_event"]["type"], m["content"]) for m in posted] == [
        ("system", "channel_create", "root created this room.")]

    snap = await snapshot(rt, int(guild["id"]), int(user["id"]))
    by_position = {r["position"]: r for r in snap["roles"]}
    assert len(snap["roles"]) == 2
    default, admin_role = by_position[0], by_position[1]
    assert (default["id"], default["name"], default["is_default"]) == (guild["id"], "User", True)
    assert default["permissions"] == perms.to_string(perms.DEFAULT)
    assert (admin_role["name"], admin_role["is_default"]) == ("Administrator", False)
    assert admin_role["permissions"] == perms.to_string(perms.ALL)
    assert len(admin_role["permissions"].split("|")) == 37
    assert snap["member"]["roles"] == [admin_role["id"]]
    assert snap["member"]["user"]["id"] == user["id"]

    # The administrator can administer the guild through the API.
    patched = await client.patch(f"{API}/guilds/{guild['id']}", json={"description": "home"}, headers=headers)
    assert patched.status_code == 200
    log = await client.get(f"{API}/guilds/{guild['id']}/audit-logs", params={"action": "guild.create"},
                           headers=headers)
    [create] = log.json()["audit_entries"]
    assert create["actor_id"] is None and create["actor"] is None and create["target_id"] == guild["id"]

    async with rt.engine.connect() as conn:
        grants = (await conn.execute(select(audit_log).where(audit_log.c.action == "instance.admin_grant"))
                  ).mappings().all()
    assert [(g["actor_id"], g["target_type"], g["target_id"], g["guild_id"]) for g in grants] == [
        (None, "user", int(user["id"]), None)]


async def test_second_run_changes_nothing(cli, client, rt):
    first = await cli("bootstrap-admin", "--username", "root", "--email", "root@example.com",
                      "--password", "a long admin passphrase")
    assert first.exit_code == 0, first.stderr
    assert "password" not in first.json
    before = await counts(rt)
    assert before["users"] == 1 and before["guilds"] == 1
    for args in (("--username", "root", "--email", "root@example.com"),
                 ("--username", "other", "--email", "other@example.com", "--guild-name", "Second"),
                 ("--username", "x", "--email", "bad", "--password", "short")):
        again = await cli("bootstrap-admin", *args)
        assert again.exit_code == 0, again.stderr
        assert again.json == {"status": "already_bootstrapped"}
    assert await counts(rt) == before
    # The given password works (after enrolling 2FA).
    await sign_in_admin(cli, client, "root@example.com", "root@example.com", "a long admin passphrase")


async def test_any_existing_administrator_counts_as_bootstrapped(cli, client, accounts, rt):
    await accounts.register("alice")
    assert (await cli("make-admin", "--email", "alice@example.com")).exit_code == 0
    before = await counts(rt)
    r = await cli("bootstrap-admin", "--username", "root", "--email", "root@example.com")
    assert r.exit_code == 0 and r.json == {"status": "already_bootstrapped"}
    assert await counts(rt) == before


async def test_any_main_server_counts_as_bootstrapped(cli, accounts, client, rt):
    a = await accounts.register("alice")
    g = (await client.post(f"{API}/guilds", json={"name": "Plain"}, headers=a.headers)).json()["guild"]
    assert g["is_main"] is False
    assert (await cli("bootstrap-admin", "--username", "root", "--email", "root@example.com")).json["status"] == "created"
    async with rt.engine.begin() as conn:
        await conn.execute(users.update().values(is_instance_admin=False))
    before = await counts(rt)
    r = await cli("bootstrap-admin", "--username", "root2", "--email", "root2@example.com")
    assert r.json == {"status": "already_bootstrapped"}
    assert await counts(rt) == before


async def test_custom_guild_name(cli, client, rt):
    r = await cli("bootstrap-admin", "--username", "root", "--email", "root@example.com", "--guild-name",
                  "  Town Hall ")
    assert r.exit_code == 0, r.stderr
    async with rt.engine.connect() as conn:
        guild = (await conn.execute(select(guilds))).mappings().one()
    assert guild["name"] == "Town Hall" and guild["is_main"] is True and str(guild["id"]) == r.json["guild_id"]


async def test_invalid_input_creates_nothing(cli, rt):
    before = await counts(rt)
    for args, field in ((("--username", "x", "--email", "root@example.com"), "username"),
                        (("--username", "root", "--email", "not-an-email"), "email"),
                        (("--username", "root", "--email", "root@example.com", "--password", "short"), "password"),
                        (("--username", "root", "--email", "root@example.com", "--password", "qwertyuiop"),
                         "password"),
                        (("--username", "root", "--email", "root@example.com", "--guild-name", "M"), "guild_name")):
        r = await cli("bootstrap-admin", *args)
        assert r.exit_code == 1, args
        assert r.error["code"] == "validation.failed", args
        assert r.stdout.strip() == ""
    assert await counts(rt) == before


async def test_existing_username_is_refused(cli, accounts, rt):
    await accounts.register("root")
    r = await cli("bootstrap-admin", "--username", "ROOT", "--email", "new@example.com")
    assert r.exit_code == 1 and r.error["code"] == "user.username_taken"
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(guilds))).scalar_one() == 0


async def test_usage_errors_exit_2(cli):
    assert (await cli("bootstrap-admin", "--email", "root@example.com")).exit_code == 2
    assert (await cli("bootstrap-admin", "--username", "root")).exit_code == 2

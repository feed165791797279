"""Guild create, read, update, delete, leave and own list (OpenAPI: createGuild, updateGuild, deleteGuild), through HTTP."""

from __future__ import annotations

from sqlalchemy import select, update

from meadhall.core import permissions as perms
from meadhall.db.schema import audit_log, channels, guilds, members, messages, roles, users
from tests.support.factories import add_member
from tests.support.guilds import make_guild

API = "/api/v1"


async def audit_actions(rt, guild_id=None):
    stmt = select(audit_log).order_by(audit_log.c.id)
    if guild_id is not None:
        stmt = stmt.where(audit_log.c.guild_id == int(guild_id))
    async with rt.engine.connect() as conn:
        return list((await conn.execute(stmt)).mappings())


async def test_create_builds_default_role_general_room_and_owner(client, accounts, rt, capture_events):
    a = await accounts.register("alice")
    guild = await make_guild(client, a, "  Mead Hall  ")
    assert guild["name"] == "Mead Hall"
    assert guild["owner_id"] == a.id and guild["member_count"] == 1
    assert guild["is_main"] is False and guild["public"] is False
    async with rt.engine.connect() as conn:
        role_rows = (await conn.execute(select(roles).where(roles.c.guild_id == int(guild["id"])))).mappings().all()
        rooms = (await conn.execute(select(channels).where(channels.c.guild_id == int(guild["id"])))).mappings().all()
        system = (await conn.execute(select(messages).where(messages.c.kind == "system"))).mappings().all()
    [default_role] = role_rows
    assert default_role["id"] == int(guild["id"]) and default_role["name"] == "@user"
    assert default_role["permissions"] == int(perms.DEFAULT) == 81708572225
    [general] = rooms
    assert general["name"] == "general" and general["type"] == "text"
    assert guild["system_channel_id"] == str(general["id"])
    assert [m["system_event"]["type"] for m in system] == ["channel_create"]
    [entry] = await audit_actions(rt, guild["id"])
    assert entry["action"] == "guild.create" and entry["actor_id"] == int(a.id)
    await capture_events.settle()
    [created] = capture_events.of_type("GUILD_CREATE")
    assert created.users == (int(a.id),)
    snap = created.data
    assert snap["id"] == guild["id"]
    assert [r["name"] for r in snap["roles"]] == ["@user"]
    assert [c["name"] for c in snap["channels"]] == ["general"]
    assert snap["member"]["user"]["id"] == a.id
    assert snap["emojis"] == [] and snap["sounds"] == [] and snap["voice_states"] == []


async def test_create_validates_name(client, accounts):
    a = await accounts.register("alice")
    for body in ({"name": "x"}, {"name": "y" * 101}, {}, {"name": "ok", "template_id": "nope"}):
        r = await client.post(f"{API}/guilds", json=body, headers=a.headers)
        assert r.status_code == 422, body
        assert r.json()["error"]["code"] == "validation.failed"


async def test_membership_limit(client, accounts, rt, clock):
    a = await accounts.register("alice")
    await make_guild(client, a)
    now = clock.now()
    async with rt.engine.begin() as conn:  # 199 more memberships, written directly for speed
        await conn.execute(guilds.insert(), [
            {"id": 10_000 + i, "name": f"g{i}", "name_norm": f"g{i}", "owner_id": int(a.id), "member_count": 1,
             "public": False, "is_main": False, "created_at": now} for i in range(199)])
        await conn.execute(members.insert(), [
            {"guild_id": 10_000 + i, "user_id": int(a.id), "joined_at": now} for i in range(199)])
    r = await client.post(f"{API}/guilds", json={"name": "One too many"}, headers=a.headers)
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "guild.limit_reached"


async def test_get_guild_member_only_admin_sees_all(client, accounts, rt):
    a, b, admin = await accounts.register("alice"), await accounts.register("bob"), await accounts.register("root")
    guild = await make_guild(client, a)
    assert (await client.get(f"{API}/guilds/{guild['id']}", headers=a.headers)).json()["guild"] == guild
    r = await client.get(f"{API}/guilds/{guild['id']}", headers=b.headers)
    assert r.status_code == 404 and r.json()["error"]["code"] == "guild.not_found"
    assert (await client.get(f"{API}/guilds/123", headers=a.headers)).status_code == 404
    assert (await client.get(f"{API}/guilds/not-an-id", headers=a.headers)).status_code == 404
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(admin.id)).values(is_instance_admin=True))
    assert (await client.get(f"{API}/guilds/{guild['id']}", headers=admin.headers)).status_code == 200


async def test_my_guilds_in_join_order_and_new_account_has_none(client, accounts, rt, clock):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    assert (await client.get(f"{API}/users/@me/guilds", headers=b.headers)).json() == {"guilds": []}
    first = await make_guild(client, a, "First")
    second = await make_guild(client, b, "Second")
    clock.advance(1)
    await add_member(rt, first["id"], b)
    listed = (await client.get(f"{API}/users/@me/guilds", headers=b.headers)).json()["guilds"]
    assert [g["id"] for g in listed] == [second["id"], first["id"]]


async def test_update_requires_manage_guild_and_emits_update(client, accounts, rt, capture_events):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, a)
    await add_member(rt, guild["id"], b)
    r = await client.patch(f"{API}/guilds/{guild['id']}", json={"name": "Renamed"}, headers=b.headers)
    assert r.status_code == 403
    assert r.json()["error"] == {"code": "perm.denied", "message": r.json()["error"]["message"],
                                 "permission": "MANAGE_GUILD"}
    await capture_events.reset()
    r = await client.patch(f"{API}/guilds/{guild['id']}", json={"name": "Renamed", "description": "d"},
                           headers=a.headers)
    assert r.status_code == 200 and r.json()["guild"]["name"] == "Renamed"
    await capture_events.settle()
    [ev] = capture_events.of_type("GUILD_UPDATE")
    assert set(ev.users) == {int(a.id), int(b.id)} and ev.data["name"] == "Renamed"
    entry = [e for e in await audit_actions(rt, guild["id"]) if e["action"] == "guild.update"][-1]
    assert entry["data"]["changes"]["name"] == ["Hall", "Renamed"]


async def test_system_channel_must_be_a_text_room_of_the_guild(client, accounts):
    a = await accounts.register("alice")
    guild = await make_guild(client, a)
    other = await make_guild(client, a, "Other")
    voice = (await client.post(f"{API}/guilds/{guild['id']}/channels", json={"name": "v", "type": "voice"},
                               headers=a.headers)).json()["channel"]
    for bad in (voice["id"], other["system_channel_id"], "999"):
        r = await client.patch(f"{API}/guilds/{guild['id']}", json={"system_channel_id": bad}, headers=a.headers)
        assert r.status_code == 422, bad
    r = await client.patch(f"{API}/guilds/{guild['id']}", json={"system_channel_id": None}, headers=a.headers)
    assert r.status_code == 200 and r.json()["guild"]["system_channel_id"] is None


async def test_owner_transfer_needs_owner_step_up_and_a_member(client, accounts, rt, clock):
    a, b, c = await accounts.register("alice"), await accounts.register("bob"), await accounts.register("carol")
    guild = await make_guild(client, a)
    await add_member(rt, guild["id"], b)
    r = await client.patch(f"{API}/guilds/{guild['id']}", json={"owner_id": c.id}, headers=a.headers)
    assert r.status_code == 422  # not a member
    clock.advance(601)  # the sign-in step-up window is over
    r = await client.patch(f"{API}/guilds/{guild['id']}", json={"owner_id": b.id}, headers=a.headers)
    assert r.status_code == 403 and r.json()["error"]["code"] == "auth.step_up_required"
    r = await client.post(f"{API}/auth/step-up", json={"password": a["password"]}, headers=a.headers)
    assert r.status_code == 200
    r = await client.patch(f"{API}/guilds/{guild['id']}", json={"owner_id": b.id}, headers=a.headers)
    assert r.status_code == 200 and r.json()["guild"]["owner_id"] == b.id
    actions = [e["action"] for e in await audit_actions(rt, guild["id"])]
    assert "guild.owner_transfer" in actions
    # The old owner is an ordinary member now.
    r = await client.patch(f"{API}/guilds/{guild['id']}", json={"name": "Mine"}, headers=a.headers)
    assert r.status_code == 403


async def test_non_owner_with_manage_guild_cannot_transfer(client, accounts, rt):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, a)
    await add_member(rt, guild["id"], b)
    async with rt.engine.begin() as conn:
        await conn.execute(update(roles).where(roles.c.id == int(guild["id"])).values(
            permissions=int(perms.DEFAULT | perms.P.MANAGE_GUILD)))
    r = await client.patch(f"{API}/guilds/{guild['id']}", json={"owner_id": b.id}, headers=b.headers)
    assert r.status_code == 403 and r.json()["error"]["permission"] is None


async def test_delete_owner_only_with_step_up(client, accounts, rt, clock, capture_events):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, a)
    await add_member(rt, guild["id"], b)
    r = await client.delete(f"{API}/guilds/{guild['id']}", headers=b.headers)
    assert r.status_code == 403 and r.json()["error"]["code"] == "perm.denied"
    clock.advance(601)
    r = await client.delete(f"{API}/guilds/{guild['id']}", headers=a.headers)
    assert r.status_code == 403 and r.json()["error"]["code"] == "auth.step_up_required"
    await client.post(f"{API}/auth/step-up", json={"password": a["password"]}, headers=a.headers)
    await capture_events.reset()
    r = await client.delete(f"{API}/guilds/{guild['id']}", headers=a.headers)
    assert r.status_code == 204
    await capture_events.settle()
    [ev] = capture_events.of_type("GUILD_DELETE")
    assert ev.data == {"id": guild["id"], "reason": "deleted"} and set(ev.users) == {int(a.id), int(b.id)}
    assert (await client.get(f"{API}/guilds/{guild['id']}", headers=a.headers)).status_code == 404
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(channels).where(channels.c.guild_id == int(guild["id"])))).first() is None
        assert (await conn.execute(select(messages))).first() is None
    assert "guild.delete" in [e["action"] for e in await audit_actions(rt, guild["id"])]


async def test_leave(client, accounts, rt, capture_events):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, a)
    await add_member(rt, guild["id"], b)
    r = await client.delete(f"{API}/users/@me/guilds/{guild['id']}", headers=a.headers)
    assert r.status_code == 409 and r.json()["error"]["code"] == "guild.owner_cannot_leave"
    await capture_events.reset()
    r = await client.delete(f"{API}/users/@me/guilds/{guild['id']}", headers=b.headers)
    assert r.status_code == 204
    await capture_events.settle()
    [gone] = capture_events.of_type("GUILD_DELETE")
    assert gone.users == (int(b.id),) and gone.data["reason"] == "left"
    [removed] = capture_events.of_type("MEMBER_REMOVE")
    assert removed.users == (int(a.id),) and removed.data["user"]["id"] == b.id
    [msg] = capture_events.of_type("MESSAGE_CREATE")
    assert msg.data["system_event"]["type"] == "member_leave" and msg.data["content"] == "bob left the server."
    assert (await client.get(f"{API}/guilds/{guild['id']}", headers=b.headers)).status_code == 404
    assert (await client.get(f"{API}/guilds/{guild['id']}", headers=a.headers)).json()["guild"]["member_count"] == 1
    r = await client.delete(f"{API}/users/@me/guilds/{guild['id']}", headers=b.headers)
    assert r.status_code == 404

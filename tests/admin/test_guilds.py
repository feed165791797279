"""Instance administration of servers (docs/admin.md, "Servers"; OpenAPI: listInstanceGuilds,
updateInstanceGuild, deleteInstanceGuild): the list with its filters and owners, rename and the one main
server, deletion with step-up, the events members receive and the audit entries."""

from __future__ import annotations

from sqlalchemy import select, update

from meadhall.db.schema import audit_log, guilds
from tests.support.accounts import next_code
from tests.support.admin import admin_account
from tests.support.delivery import of_type, online, until
from tests.support.factories import add_member
from tests.support.guilds import make_guild
from tests.support.http import Api, assert_error, invalid
from tests.support.shapes import GUILD_FIELDS, SUMMARY_FIELDS


async def instance_audit(rt, action):
    stmt = select(audit_log).where(audit_log.c.action == action).order_by(audit_log.c.id)
    async with rt.engine.connect() as conn:
        return [dict(r) for r in (await conn.execute(stmt)).mappings()]


async def set_main(rt, guild_id):
    async with rt.engine.begin() as conn:
        await conn.execute(update(guilds).where(guilds.c.id == int(guild_id)).values(is_main=True))


async def main_ids(rt):
    async with rt.engine.connect() as conn:
        return {str(i) for i in (await conn.execute(select(guilds.c.id).where(guilds.c.is_main.is_(True)))).scalars()}


# ---- refusals ------------------------------------------------------------------------------------------------------

async def test_every_route_refuses_a_non_administrator(client, accounts, rt):
    api, alice = Api(client), await accounts.register("alice")
    guild = await make_guild(client, alice, "Hall")
    for method, path, body in (("GET", "/instance/guilds", None),
                               ("PATCH", f"/instance/guilds/{guild['id']}", {"name": "Other"}),
                               ("DELETE", f"/instance/guilds/{guild['id']}", None)):
        r = await api.request(method, path, alice, expect=None, json=body)
        assert_error(r, 403, "perm.denied")
    assert (await api.get(f"/guilds/{guild['id']}", alice))["guild"]["name"] == "Hall"
    r = await api.request("GET", "/instance/guilds", None, expect=None)
    assert r.status_code == 401


async def test_unknown_or_malformed_guild_is_not_found(client, accounts, rt):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    for raw in ("123", "nope"):
        assert_error(await api.request("PATCH", f"/instance/guilds/{raw}", admin, expect=None, json={"name": "Xy"}),
                     404, "guild.not_found")
        assert_error(await api.request("DELETE", f"/instance/guilds/{raw}", admin, expect=None),
                     404, "guild.not_found")


# ---- list ----------------------------------------------------------------------------------------------------------

async def test_list_newest_first_with_owner_total_and_pages(client, accounts, rt, assert_query_count):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    made = [await make_guild(client, owner, f"Hall {i}") for i, owner in enumerate((alice, bob, alice, bob, alice))]
    await api.get("/instance/guilds?limit=1", admin)  # the session's first use reads more than a page does
    with assert_query_count(10) as small:
        body = await api.get("/instance/guilds?limit=2", admin)
    with assert_query_count(10) as large:
        await api.get("/instance/guilds?limit=5", admin)
    assert len(small) == len(large)  # page, count and owners whatever the page holds: never one per guild
    assert body["total"] == 5 and body["has_more"] is True
    assert [g["id"] for g in body["guilds"]] == [made[4]["id"], made[3]["id"]]
    first = body["guilds"][0]
    assert set(first) == GUILD_FIELDS | {"owner"} and set(first["owner"]) == SUMMARY_FIELDS
    assert first["owner"]["id"] == alice.id and first["owner"]["username"] == "alice"
    assert first["name"] == "Hall 4" and first["is_main"] is False
    rest = await api.get(f"/instance/guilds?limit=2&before={made[3]['id']}", admin)
    assert [g["id"] for g in rest["guilds"]] == [made[2]["id"], made[1]["id"]] and rest["has_more"] is True
    last = await api.get(f"/instance/guilds?limit=2&before={made[1]['id']}", admin)
    assert [g["id"] for g in last["guilds"]] == [made[0]["id"]] and last["has_more"] is False
    assert last["total"] == 5


async def test_list_filters_by_name_owner_and_main_flag(client, accounts, rt):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    mead = await make_guild(client, alice, "Великий Мёд")
    await make_guild(client, bob, "Ale House")
    percent = await make_guild(client, bob, "100% Ale")
    await set_main(rt, mead["id"])

    async def ids(query):
        body = await api.get(f"/instance/guilds?{query}", admin)
        assert body["total"] == len(body["guilds"])
        return [g["name"] for g in body["guilds"]]

    assert await ids("q=ВЕЛИКИЙ") == ["Великий Мёд"]  # casefolded, Cyrillic included
    assert await ids("q=ale") == ["100% Ale", "Ale House"]
    assert await ids("q=%25") == ["100% Ale"]  # % is a character, not a wildcard
    assert await ids("q=_") == []
    assert await ids(f"owner_id={bob.id}") == ["100% Ale", "Ale House"]
    assert await ids(f"owner_id={bob.id}&q=house") == ["Ale House"]
    assert await ids("main=true") == ["Великий Мёд"]
    assert await ids("main=false") == ["100% Ale", "Ale House"]
    assert await ids("owner_id=1") == []
    assert percent["id"]


async def test_list_refuses_malformed_parameters(client, accounts, rt):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    for query, field in (("owner_id=abc", "owner_id"), ("before=x", "before"), ("main=yes", "main"),
                         ("limit=0", "limit"), ("limit=101", "limit"), ("q=", "q")):
        invalid(await api.request("GET", f"/instance/guilds?{query}", admin, expect=None), field)


# ---- update --------------------------------------------------------------------------------------------------------

async def test_rename_any_server_reaches_members_and_is_audited(gateway, client, accounts, rt):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, alice, "Old Name")
    await add_member(rt, guild["id"], bob)
    a, b = await online(gateway, client, alice, bob)
    body = await api.patch(f"/instance/guilds/{guild['id']}", admin, json={"name": "  New Name  "})
    assert body["guild"]["name"] == "New Name" and set(body["guild"]) == GUILD_FIELDS
    for conn in (a, b):
        [ev] = of_type(await until(conn, "GUILD_UPDATE"), "GUILD_UPDATE")
        assert ev["id"] == guild["id"] and ev["name"] == "New Name"
    [entry] = await instance_audit(rt, "instance.guild_update")
    assert entry["actor_id"] == int(admin.id) and entry["guild_id"] == int(guild["id"])
    assert entry["target_type"] == "guild" and entry["target_id"] == int(guild["id"])
    assert entry["data"] == {"changes": {"name": ["Old Name", "New Name"]}}
    # The renamed server is found by its new name, in any case.
    found = await api.get("/instance/guilds?q=NEW", admin)
    assert [g["id"] for g in found["guilds"]] == [guild["id"]]


async def test_rename_follows_the_guild_name_rule(client, accounts, rt):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    guild = await make_guild(client, await accounts.register("alice"), "Hall")
    for body in ({"name": "x"}, {"name": "y" * 101}, {"name": "  a  "}, {"name": None}, {"name": "two\nlines"},
                 {"is_main": None}, {"is_main": 1}, {"is_main": "true"}, {"owner_id": "1"}):
        r = await api.request("PATCH", f"/instance/guilds/{guild['id']}", admin, expect=None, json=body)
        assert r.status_code == 422 and r.json()["error"]["code"] == "validation.failed", body
    assert (await api.get(f"/guilds/{guild['id']}", admin))["guild"]["name"] == "Hall"
    assert await instance_audit(rt, "instance.guild_update") == []


async def test_main_flag_is_exclusive(client, accounts, rt, capture_events):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    first = await make_guild(client, alice, "First")
    second = await make_guild(client, bob, "Second")
    await set_main(rt, first["id"])
    await capture_events.reset()
    body = await api.patch(f"/instance/guilds/{second['id']}", admin, json={"is_main": True})
    assert body["guild"]["is_main"] is True
    assert await main_ids(rt) == {second["id"]}
    await capture_events.settle()
    updates = {ev.data["id"]: (ev.data["is_main"], set(ev.users)) for ev in capture_events.of_type("GUILD_UPDATE")}
    assert updates == {first["id"]: (False, {int(alice.id)}), second["id"]: (True, {int(bob.id)})}
    changes = {e["guild_id"]: e["data"]["changes"] for e in await instance_audit(rt, "instance.guild_update")}
    assert changes == {int(first["id"]): {"is_main": [True, False]}, int(second["id"]): {"is_main": [False, True]}}
    # Setting it again changes nothing; clearing it leaves no main server.
    await capture_events.reset()
    await api.patch(f"/instance/guilds/{second['id']}", admin, json={"is_main": True})
    await capture_events.settle()
    assert capture_events.of_type("GUILD_UPDATE") == []
    await api.patch(f"/instance/guilds/{first['id']}", admin, json={"is_main": False})
    assert await main_ids(rt) == {second["id"]}
    body = await api.patch(f"/instance/guilds/{second['id']}", admin, json={"is_main": False})
    assert body["guild"]["is_main"] is False and await main_ids(rt) == set()
    listed = await api.get("/instance/guilds?main=true", admin)
    assert listed == {"guilds": [], "total": 0, "has_more": False}


async def test_empty_patch_changes_nothing(client, accounts, rt, capture_events):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    guild = await make_guild(client, await accounts.register("alice"), "Hall")
    await capture_events.reset()
    body = await api.patch(f"/instance/guilds/{guild['id']}", admin, json={"name": "Hall"})
    assert body["guild"] == (await api.get(f"/guilds/{guild['id']}", admin))["guild"]
    await api.patch(f"/instance/guilds/{guild['id']}", admin, json={})
    await capture_events.settle()
    assert capture_events.of_type("GUILD_UPDATE") == []
    assert await instance_audit(rt, "instance.guild_update") == []


# ---- delete --------------------------------------------------------------------------------------------------------

async def test_delete_needs_step_up_then_reaches_members(gateway, client, accounts, rt, clock):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, alice, "Doomed")
    await add_member(rt, guild["id"], bob)
    clock.advance(601)
    assert_error(await api.request("DELETE", f"/instance/guilds/{guild['id']}", admin, expect=None),
                 403, "auth.step_up_required")
    assert (await api.get(f"/guilds/{guild['id']}", alice))["guild"]["name"] == "Doomed"
    assert await instance_audit(rt, "instance.guild_delete") == []
    await api.post("/auth/step-up", admin, expect=200,
                   json={"password": admin["password"], "totp_code": next_code(admin["totp_secret"], clock)})
    a, b = await online(gateway, client, alice, bob)
    await api.delete(f"/instance/guilds/{guild['id']}", admin)
    for conn in (a, b):
        [ev] = of_type(await until(conn, "GUILD_DELETE"), "GUILD_DELETE")
        assert ev == {"id": guild["id"], "reason": "deleted"}
    assert_error(await api.request("GET", f"/guilds/{guild['id']}", alice, expect=None), 404, "guild.not_found")
    [entry] = await instance_audit(rt, "instance.guild_delete")
    assert entry["actor_id"] == int(admin.id) and entry["guild_id"] == int(guild["id"])
    assert entry["target_type"] == "guild" and entry["target_id"] == int(guild["id"])
    assert entry["data"] == {"name": "Doomed"}
    assert await instance_audit(rt, "guild.delete") == []
    assert (await api.get("/instance/guilds", admin))["total"] == 0
    assert_error(await api.request("DELETE", f"/instance/guilds/{guild['id']}", admin, expect=None),
                 404, "guild.not_found")

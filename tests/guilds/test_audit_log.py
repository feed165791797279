"""The guild audit log `GET /guilds/{guild_id}/audit-logs` (OpenAPI: listAuditLog), through HTTP."""

from __future__ import annotations

from meadhall.audit.record import record
from meadhall.core import permissions as perms
from tests.support.factories import insert_member, update_default_permissions
from tests.support.guilds import make_guild, room

P = perms.P
API = "/api/v1"
ENTRY_KEYS = {"id", "action", "guild_id", "actor_id", "actor", "target_type", "target_id", "reason", "data",
              "created_at"}
SUMMARY_KEYS = {"id", "username", "display_name", "avatar", "bio", "status", "custom_status", "custom_status_emoji",
                "badges", "created_at", "deleted"}


async def audit(client, account, guild_id, **params):
    return await client.get(f"{API}/guilds/{guild_id}/audit-logs", params=params, headers=account.headers)


async def test_entries_newest_first_in_the_exact_shape(client, accounts, rt):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    r1 = await room(client, a, g["id"], name="one")
    assert (await client.patch(f"{API}/guilds/{g['id']}", json={"name": "Hall 2"}, headers=a.headers)).status_code == 200
    other = await make_guild(client, a, "Elsewhere")  # entries of another guild never show
    await room(client, a, other["id"], name="x")
    r = await audit(client, a, g["id"])
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"audit_entries", "has_more"} and body["has_more"] is False
    entries = body["audit_entries"]
    assert [e["action"] for e in entries] == ["guild.update", "channel.create", "guild.create"]
    assert [int(e["id"]) for e in entries] == sorted((int(e["id"]) for e in entries), reverse=True)
    for e in entries:
        assert set(e) == ENTRY_KEYS
        assert e["guild_id"] == g["id"] and e["actor_id"] == a.id
        assert set(e["actor"]) == SUMMARY_KEYS and e["actor"]["id"] == a.id and e["actor"]["username"] == "alice"
        assert e["created_at"].endswith("Z") and isinstance(e["data"], dict)
    update_entry, channel_entry, create_entry = entries
    assert channel_entry["target_type"] == "channel" and channel_entry["target_id"] == r1["id"]
    assert channel_entry["data"] == {"name": "one", "type": "text"}
    assert update_entry["data"] == {"changes": {"name": ["Hall", "Hall 2"]}}
    assert create_entry["target_type"] == "guild" and create_entry["target_id"] == g["id"]
    assert create_entry["data"] == {} and create_entry["reason"] is None


async def test_system_entries_have_no_actor(client, accounts, rt):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    async with rt.uow() as uow:
        await record(uow, "member.ban", actor_id=None, target_type="user", target_id=int(a.id),
                     guild_id=int(g["id"]), reason="spam", data={"k": [1, "two"]})
    [entry] = (await audit(client, a, g["id"], action="member.ban")).json()["audit_entries"]
    assert entry["actor_id"] is None and entry["actor"] is None
    assert entry["reason"] == "spam" and entry["data"] == {"k": [1, "two"]}
    assert entry["target_type"] == "user" and entry["target_id"] == a.id


async def test_filters(client, accounts, rt):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    g = await make_guild(client, a)
    await insert_member(rt, g["id"], b.id)
    await update_default_permissions(rt, g["id"], perms.DEFAULT | P.MANAGE_CHANNELS | P.VIEW_AUDIT_LOG)
    ra = await room(client, a, g["id"], name="by-alice")
    rb = await room(client, b, g["id"], name="by-bob")
    await room(client, b, g["id"], name="by-bob-2")

    def actions(r):
        assert r.status_code == 200, r.text
        return [(e["action"], e["data"].get("name")) for e in r.json()["audit_entries"]]

    assert actions(await audit(client, b, g["id"], action="channel.create")) == [
        ("channel.create", "by-bob-2"), ("channel.create", "by-bob"), ("channel.create", "by-alice")]
    assert actions(await audit(client, b, g["id"], actor_id=b.id)) == [
        ("channel.create", "by-bob-2"), ("channel.create", "by-bob")]
    assert actions(await audit(client, b, g["id"], actor_id=a.id, action="guild.create")) == [("guild.create", None)]
    assert actions(await audit(client, b, g["id"], target_id=rb["id"])) == [("channel.create", "by-bob")]
    assert actions(await audit(client, b, g["id"], target_id=ra["id"], actor_id=b.id)) == []
    assert actions(await audit(client, b, g["id"], action="nothing.like.this")) == []
    entry = (await audit(client, b, g["id"], actor_id=b.id)).json()["audit_entries"][0]
    assert entry["actor"]["username"] == "bob"


async def test_pagination_before_id_and_has_more(client, accounts):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    for i in range(4):
        await room(client, a, g["id"], name=f"r{i}")
    everything = (await audit(client, a, g["id"])).json()["audit_entries"]
    assert len(everything) == 5
    ids = [e["id"] for e in everything]
    first = (await audit(client, a, g["id"], limit=2)).json()
    assert [e["id"] for e in first["audit_entries"]] == ids[:2] and first["has_more"] is True
    second = (await audit(client, a, g["id"], limit=2, before_id=ids[1])).json()
    assert [e["id"] for e in second["audit_entries"]] == ids[2:4] and second["has_more"] is True
    last = (await audit(client, a, g["id"], limit=2, before_id=ids[3])).json()
    assert [e["id"] for e in last["audit_entries"]] == ids[4:] and last["has_more"] is False
    exact = (await audit(client, a, g["id"], limit=5)).json()
    assert len(exact["audit_entries"]) == 5 and exact["has_more"] is False
    filtered = (await audit(client, a, g["id"], limit=1, action="channel.create", before_id=ids[0])).json()
    assert [e["id"] for e in filtered["audit_entries"]] == ids[1:2] and filtered["has_more"] is True
    assert (await audit(client, a, g["id"], before_id=ids[-1])).json() == {"audit_entries": [], "has_more": False}


async def test_invalid_query_parameters_are_422(client, accounts):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    for params in ({"limit": 0}, {"limit": 101}, {"limit": "x"}, {"before_id": "abc"}, {"actor_id": "-1"},
                   {"target_id": "9" * 20}, {"action": "a" * 65}):
        r = await audit(client, a, g["id"], **params)
        assert r.status_code == 422, params
        error = r.json()["error"]
        assert error["code"] == "validation.failed"
        assert error["details"][0]["field"] == next(iter(params)), error
    assert (await audit(client, a, g["id"], limit=100)).status_code == 200
    assert (await audit(client, a, g["id"], limit=1)).status_code == 200


async def test_requires_view_audit_log_and_membership(client, accounts, rt):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    g = await make_guild(client, a)
    for raw in (g["id"], "123", "not-an-id"):
        r = await audit(client, b, raw)
        assert r.status_code == 404 and r.json()["error"]["code"] == "guild.not_found", raw
    await insert_member(rt, g["id"], b.id)
    r = await audit(client, b, g["id"])
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "perm.denied" and r.json()["error"]["permission"] == "VIEW_AUDIT_LOG"
    await update_default_permissions(rt, g["id"], perms.DEFAULT | P.VIEW_AUDIT_LOG)
    assert (await audit(client, b, g["id"])).status_code == 200
    await update_default_permissions(rt, g["id"], perms.DEFAULT | P.ADMINISTRATOR)
    assert (await audit(client, b, g["id"])).status_code == 200
    assert (await client.get(f"{API}/guilds/{g['id']}/audit-logs")).status_code == 401


async def test_query_count_does_not_grow_with_entries(client, accounts, assert_query_count):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    with assert_query_count(100) as few:
        assert (await audit(client, a, g["id"])).status_code == 200
    for i in range(6):
        await room(client, a, g["id"], name=f"r{i}")
    with assert_query_count(len(few)):
        r = await audit(client, a, g["id"])
    assert len(r.json()["audit_entries"]) == 7

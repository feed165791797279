"""Roles: list, read, create, update, reorder, delete, assign and remove (OpenAPI: createRole; docs/reference/permissions.md)."""

from __future__ import annotations

from sqlalchemy import insert, select

from meadhall.db.schema import member_roles, permission_overrides, roles
from tests.support.factories import add_member, audit_rows, make_admin
from tests.support.guilds import give, make_guild, make_role, users_of
from tests.support.http import API, denied, error
from tests.support.personas import staffed_hall

MOD = "KICK_MEMBERS|MANAGE_ROLES|MANAGE_CHANNELS|VIEW_CHANNEL|SEND_MESSAGES"


async def positions(client, h) -> dict[str, int]:
    r = await client.get(h.url("/roles"), headers=h.owner.headers)
    assert r.status_code == 200, r.text
    return {role["name"]: role["position"] for role in r.json()["roles"]}


# ---- read --------------------------------------------------------------------------------------


async def test_list_and_get(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    r = await client.get(h.url("/roles"), headers=h.member.headers)
    assert r.status_code == 200, r.text
    listed = r.json()["roles"]
    assert [(x["name"], x["position"]) for x in listed] == [("@user", 0), ("helper", 1), ("mod", 2), ("top", 3)]
    default = listed[0]
    assert default["id"] == h.id and default["is_default"] is True and default["guild_id"] == h.id
    assert default["permissions"].startswith("CREATE_INVITE|ADD_REACTIONS")
    mod = listed[2]
    assert mod["permissions"] == "KICK_MEMBERS|MANAGE_CHANNELS|VIEW_CHANNEL|SEND_MESSAGES|MANAGE_ROLES"
    assert (mod["color"], mod["hoist"], mod["frame_id"], mod["icon_id"]) == (0, False, None, None)
    r = await client.get(h.url(f"/roles/{mod['id']}"), headers=h.member.headers)
    assert r.status_code == 200 and r.json()["role"] == mod
    assert error(await client.get(h.url("/roles/1"), headers=h.member.headers)) == (404, "role.not_found")
    assert error(await client.get(h.url("/roles/nope"), headers=h.member.headers)) == (404, "role.not_found")
    assert error(await client.get(h.url("/roles"), headers=h.outsider.headers)) == (404, "guild.not_found")
    assert error(await client.get(h.url(f"/roles/{mod['id']}"), headers=h.outsider.headers)) == (
        404, "guild.not_found")
    # Another guild's role is unknown here.
    other = await make_guild(client, h.outsider, "Elsewhere")
    foreign = await make_role(client, h.outsider, other["id"], "foreign")
    assert error(await client.get(h.url(f"/roles/{foreign['id']}"), headers=h.owner.headers)) == (
        404, "role.not_found")


# ---- create ------------------------------------------------------------------------------------


async def test_create_places_at_one_and_shifts(client, accounts, rt, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    await capture_events.reset()
    r = await client.post(h.url("/roles"), json={"name": " Scout ", "color": 0xFF8800, "hoist": True,
                                                 "permissions": "SEND_MESSAGES | KICK_MEMBERS"},
                          headers=h.mod.headers)
    assert r.status_code == 201, r.text
    role = r.json()["role"]
    assert (role["name"], role["position"], role["color"], role["hoist"]) == ("Scout", 1, 0xFF8800, True)
    assert role["permissions"] == "KICK_MEMBERS|SEND_MESSAGES" and role["is_default"] is False
    assert await positions(client, h) == {"@user": 0, "Scout": 1, "helper": 2, "mod": 3, "top": 4}
    await capture_events.settle()
    everyone = h.ids(h.owner, h.mod, h.member)
    [created] = capture_events.of_type("ROLE_CREATE")
    assert created.data == role and set(created.users) == everyone
    shifted = {e.data["name"]: e.data["position"] for e in capture_events.of_type("ROLE_UPDATE")}
    assert shifted == {"helper": 2, "mod": 3, "top": 4}
    assert all(u == everyone for u in users_of(capture_events, "ROLE_UPDATE"))
    entry = (await audit_rows(rt, h.id, "role.create"))[-1]
    assert (entry["actor_id"], entry["target_type"], entry["target_id"]) == (int(h.mod.id), "role", int(role["id"]))
    assert entry["data"]["name"] == "Scout"
    # Defaults.
    r = await client.post(h.url("/roles"), json={"name": "plain"}, headers=h.owner.headers)
    assert r.status_code == 201
    assert (r.json()["role"]["permissions"], r.json()["role"]["color"], r.json()["role"]["hoist"]) == ("", 0, False)


async def test_create_refusals(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    denied(await client.post(h.url("/roles"), json={"name": "x"}, headers=h.member.headers), "MANAGE_ROLES")
    # Only permissions the caller holds.
    denied(await client.post(h.url("/roles"), json={"name": "x", "permissions": "BAN_MEMBERS"},
                             headers=h.mod.headers), None)
    denied(await client.post(h.url("/roles"), json={"name": "x", "permissions": "ADMINISTRATOR"},
                             headers=h.mod.headers), None)
    assert error(await client.post(h.url("/roles"), json={"name": "x"}, headers=h.outsider.headers)) == (
        404, "guild.not_found")
    for body in ({"name": ""}, {"name": "x" * 101}, {"name": "x", "color": 16777216}, {"name": "x", "color": -1},
                 {"name": "x", "permissions": "NOT_A_PERMISSION"}, {}, {"name": None}):
        r = await client.post(h.url("/roles"), json=body, headers=h.owner.headers)
        assert error(r) == (422, "validation.failed"), body
    # No cosmetics exist yet.
    for key in ("frame_id", "icon_id"):
        r = await client.post(h.url("/roles"), json={"name": "x", key: "123"}, headers=h.owner.headers)
        assert error(r) == (404, "cosmetic.not_found")
    r = await client.post(h.url("/roles"), json={"name": "x", "frame_id": None, "icon_id": None},
                          headers=h.owner.headers)
    assert r.status_code == 201
    # Holders of ADMINISTRATOR may grant anything.
    admins = await make_role(client, h.owner, h.id, "admins", "ADMINISTRATOR")
    await give(client, h.owner, h.id, h.member, admins["id"])
    r = await client.post(h.url("/roles"), json={"name": "bans", "permissions": "BAN_MEMBERS"},
                          headers=h.member.headers)
    assert r.status_code == 201, r.text


async def test_role_limit(client, accounts, rt, clock):
    owner = await accounts.register("owner")
    guild = await make_guild(client, owner)
    gid = int(guild["id"])
    rows = [{"id": gid + 1000 + i, "guild_id": gid, "name": f"r{i}", "color": 0, "position": 2 + i, "permissions": 0,
             "hoist": False, "frame_id": None, "icon_id": None, "is_default": False, "created_at": clock.now()}
            for i in range(248)]
    async with rt.engine.begin() as conn:
        await conn.execute(insert(roles), rows)
    r = await client.post(f"{API}/guilds/{gid}/roles", json={"name": "last"}, headers=owner.headers)
    assert r.status_code == 201, r.text  # the 250th, counting the default role
    r = await client.post(f"{API}/guilds/{gid}/roles", json={"name": "one more"}, headers=owner.headers)
    assert error(r) == (409, "role.limit_reached")


# ---- update ------------------------------------------------------------------------------------


async def test_update(client, accounts, rt, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    helper = h.roles["helper"]
    await capture_events.reset()
    r = await client.patch(h.url(f"/roles/{helper['id']}"),
                           json={"name": "Helpers", "color": 255, "hoist": True, "permissions": "KICK_MEMBERS"},
                           headers=h.mod.headers)
    assert r.status_code == 200, r.text
    role = r.json()["role"]
    assert (role["name"], role["color"], role["hoist"], role["permissions"]) == ("Helpers", 255, True, "KICK_MEMBERS")
    await capture_events.settle()
    [update] = capture_events.of_type("ROLE_UPDATE")
    assert update.data == role and set(update.users) == h.ids(h.owner, h.mod, h.member)
    [entry] = await audit_rows(rt, h.id, "role.update")
    assert entry["target_id"] == int(helper["id"]) and entry["actor_id"] == int(h.mod.id)
    assert entry["data"]["changes"]["name"] == ["helper", "Helpers"]
    assert entry["data"]["changes"]["permissions"] == ["", "KICK_MEMBERS"]
    # A request that changes nothing writes nothing.
    await capture_events.reset()
    r = await client.patch(h.url(f"/roles/{helper['id']}"), json={"name": "Helpers"}, headers=h.mod.headers)
    assert r.status_code == 200
    await capture_events.settle()
    assert capture_events.of_type("ROLE_UPDATE") == [] and len(await audit_rows(rt, h.id, "role.update")) == 1


async def test_update_refusals(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    helper, mod, top = h.roles["helper"], h.roles["mod"], h.roles["top"]
    denied(await client.patch(h.url(f"/roles/{helper['id']}"), json={"name": "x"}, headers=h.member.headers),
           "MANAGE_ROLES")
    denied(await client.patch(h.url(f"/roles/{mod['id']}"), json={"name": "x"}, headers=h.mod.headers), None)
    denied(await client.patch(h.url(f"/roles/{top['id']}"), json={"name": "x"}, headers=h.mod.headers), None)
    denied(await client.patch(h.url(f"/roles/{helper['id']}"), json={"permissions": "BAN_MEMBERS"},
                              headers=h.mod.headers), None)
    assert error(await client.patch(h.url("/roles/5"), json={"name": "x"}, headers=h.mod.headers)) == (
        404, "role.not_found")
    assert error(await client.patch(h.url(f"/roles/{helper['id']}"), json={"name": "x"},
                                    headers=h.outsider.headers)) == (404, "guild.not_found")
    for body in ({"name": None}, {"color": None}, {"permissions": None}, {"hoist": None}, {"color": 1 << 24}):
        r = await client.patch(h.url(f"/roles/{helper['id']}"), json=body, headers=h.owner.headers)
        assert error(r) == (422, "validation.failed"), body
    r = await client.patch(h.url(f"/roles/{helper['id']}"), json={"icon_id": "77"}, headers=h.owner.headers)
    assert error(r) == (404, "cosmetic.not_found")
    r = await client.patch(h.url(f"/roles/{helper['id']}"), json={"icon_id": None, "frame_id": None},
                           headers=h.owner.headers)
    assert r.status_code == 200


async def test_default_role_rules(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    r = await client.patch(h.url(f"/roles/{h.id}"), json={"name": "everyone"}, headers=h.owner.headers)
    assert error(r) == (422, "role.default_role")
    # Its permissions may be changed by a MANAGE_ROLES holder, within their own permissions.
    r = await client.patch(h.url(f"/roles/{h.id}"), json={"permissions": "VIEW_CHANNEL|SEND_MESSAGES"},
                           headers=h.mod.headers)
    assert r.status_code == 200, r.text
    assert r.json()["role"]["permissions"] == "VIEW_CHANNEL|SEND_MESSAGES"
    denied(await client.patch(h.url(f"/roles/{h.id}"), json={"permissions": "VIEW_CHANNEL|BAN_MEMBERS"},
                              headers=h.mod.headers), None)
    r = await client.patch(h.url(f"/roles/{h.id}"), json={"name": "@user", "color": 5}, headers=h.owner.headers)
    assert r.status_code == 200
    assert error(await client.delete(h.url(f"/roles/{h.id}"), headers=h.owner.headers)) == (422, "role.default_role")
    for method in (client.put, client.delete):
        r = await method(h.url(f"/members/{h.member.id}/roles/{h.id}"), headers=h.owner.headers)
        assert error(r) == (422, "role.default_role")
    r = await client.patch(h.url("/roles"), json={"roles": [{"id": h.id, "position": 2}]}, headers=h.owner.headers)
    assert error(r) == (422, "role.default_role")


# ---- reorder -----------------------------------------------------------------------------------


async def test_reorder(client, accounts, rt, capture_events):
    h = await staffed_hall(client, accounts, rt, "MANAGE_ROLES")
    low = await make_role(client, h.owner, h.id, "low")
    assert await positions(client, h) == {"@user": 0, "low": 1, "helper": 2, "mod": 3, "top": 4}
    await capture_events.reset()
    r = await client.patch(h.url("/roles"), json={"roles": [{"id": low["id"], "position": 2}]},
                           headers=h.mod.headers)
    assert r.status_code == 200, r.text
    assert [(x["name"], x["position"]) for x in r.json()["roles"]] == [
        ("@user", 0), ("helper", 1), ("low", 2), ("mod", 3), ("top", 4)]
    await capture_events.settle()
    assert {e.data["name"]: e.data["position"] for e in capture_events.of_type("ROLE_UPDATE")} == {
        "helper": 1, "low": 2}
    [entry] = await audit_rows(rt, h.id, "role.reorder")
    assert entry["actor_id"] == int(h.mod.id) and entry["target_type"] == "role"
    assert {m["id"]: m["to"] for m in entry["data"]["roles"]} == {low["id"]: 2, h.roles["helper"]["id"]: 1}
    # Swapping in one request; the owner moves anything, positions come out 1..n.
    r = await client.patch(h.url("/roles"), json={"roles": [{"id": h.roles["top"]["id"], "position": 1},
                                                            {"id": low["id"], "position": 4}]},
                           headers=h.owner.headers)
    assert r.status_code == 200, r.text
    assert [x["name"] for x in r.json()["roles"]] == ["@user", "top", "helper", "mod", "low"]
    assert [x["position"] for x in r.json()["roles"]] == [0, 1, 2, 3, 4]


async def test_reorder_refusals(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, "MANAGE_ROLES")
    helper, mod, top = h.roles["helper"], h.roles["mod"], h.roles["top"]
    move = {"roles": [{"id": helper["id"], "position": 1}]}
    denied(await client.patch(h.url("/roles"), json=move, headers=h.member.headers), "MANAGE_ROLES")
    assert error(await client.patch(h.url("/roles"), json=move, headers=h.outsider.headers)) == (
        404, "guild.not_found")
    # Not to the caller's own level or above, and not the caller's own role or a higher one.
    for moves in ([{"id": helper["id"], "position": 2}], [{"id": helper["id"], "position": 3}],
                  [{"id": mod["id"], "position": 1}], [{"id": top["id"], "position": 1}]):
        denied(await client.patch(h.url("/roles"), json={"roles": moves}, headers=h.mod.headers), None)
    for body in ({"roles": []}, {"roles": [{"id": "1", "position": 1}]}, {"roles": [{"id": helper["id"]}]},
                 {"roles": [{"id": helper["id"], "position": 1}, {"id": helper["id"], "position": 1}]}):
        r = await client.patch(h.url("/roles"), json=body, headers=h.owner.headers)
        assert error(r) == (422, "validation.failed"), body


async def test_instance_admin_reorders_without_membership(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, "MANAGE_ROLES")
    admin = await accounts.register("root")
    await make_admin(rt, admin)
    r = await client.patch(h.url("/roles"), json={"roles": [{"id": h.roles["top"]["id"], "position": 1}]},
                           headers=admin.headers)
    assert r.status_code == 200, r.text
    assert [x["name"] for x in r.json()["roles"]] == ["@user", "top", "helper", "mod"]


# ---- delete ------------------------------------------------------------------------------------


async def test_delete_removes_overrides_and_updates_holders(client, accounts, rt, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    helper = h.roles["helper"]
    await give(client, h.owner, h.id, h.member, helper["id"])
    rooms = (await client.get(h.url("/channels"), headers=h.owner.headers)).json()["channels"]
    general = rooms[0]["id"]
    r = await client.put(f"{API}/channels/{general}/permissions/{helper['id']}",
                         json={"type": "role", "deny": "SEND_MESSAGES"}, headers=h.owner.headers)
    assert r.status_code == 204, r.text
    await capture_events.reset()
    r = await client.delete(h.url(f"/roles/{helper['id']}"), headers=h.mod.headers)
    assert r.status_code == 204, r.text
    await capture_events.settle()
    everyone = h.ids(h.owner, h.mod, h.member)
    [deleted] = capture_events.of_type("ROLE_DELETE")
    assert deleted.data == {"guild_id": h.id, "role_id": helper["id"]} and set(deleted.users) == everyone
    [member_update] = capture_events.of_type("MEMBER_UPDATE")
    assert member_update.data["user"]["id"] == h.member.id and member_update.data["roles"] == []
    assert set(member_update.users) == everyone
    [room_update] = capture_events.of_type("CHANNEL_UPDATE")
    assert room_update.data["id"] == general and room_update.data["permission_overrides"] == []
    assert set(room_update.users) == everyone
    [entry] = await audit_rows(rt, h.id, "role.delete")
    assert (entry["actor_id"], entry["target_type"], entry["target_id"]) == (int(h.mod.id), "role",
                                                                            int(helper["id"]))
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(permission_overrides).where(
            permission_overrides.c.target_id == int(helper["id"])))).all() == []
        assert (await conn.execute(select(member_roles).where(
            member_roles.c.role_id == int(helper["id"])))).all() == []
    assert error(await client.get(h.url(f"/roles/{helper['id']}"), headers=h.owner.headers)) == (
        404, "role.not_found")


async def test_delete_refusals(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    denied(await client.delete(h.url(f"/roles/{h.roles['helper']['id']}"), headers=h.member.headers),
           "MANAGE_ROLES")
    denied(await client.delete(h.url(f"/roles/{h.roles['mod']['id']}"), headers=h.mod.headers), None)
    denied(await client.delete(h.url(f"/roles/{h.roles['top']['id']}"), headers=h.mod.headers), None)
    assert error(await client.delete(h.url("/roles/9"), headers=h.mod.headers)) == (404, "role.not_found")
    assert error(await client.delete(h.url(f"/roles/{h.roles['helper']['id']}"),
                                     headers=h.outsider.headers)) == (404, "guild.not_found")


# ---- assignment --------------------------------------------------------------------------------


async def test_assign_and_remove(client, accounts, rt, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    helper = h.roles["helper"]
    url = h.url(f"/members/{h.member.id}/roles/{helper['id']}")
    await capture_events.reset()
    r = await client.put(url, headers=h.mod.headers)
    assert r.status_code == 204, r.text
    await capture_events.settle()
    [update] = capture_events.of_type("MEMBER_UPDATE")
    assert update.data["roles"] == [helper["id"]] and set(update.users) == h.ids(h.owner, h.mod, h.member)
    entry = (await audit_rows(rt, h.id, "member.role_add"))[-1]
    assert (entry["actor_id"], entry["target_id"], entry["data"]) == (int(h.mod.id), int(h.member.id),
                                                                      {"role_id": helper["id"]})
    # Idempotent: no second event or audit entry.
    await capture_events.reset()
    assert (await client.put(url, headers=h.mod.headers)).status_code == 204
    await capture_events.settle()
    assert capture_events.of_type("MEMBER_UPDATE") == []
    assert [e["target_id"] for e in await audit_rows(rt, h.id, "member.role_add")] == [int(h.mod.id), int(h.member.id)]
    r = await client.get(h.url(f"/members/{h.member.id}"), headers=h.member.headers)
    assert r.json()["member"]["roles"] == [helper["id"]]

    assert (await client.delete(url, headers=h.mod.headers)).status_code == 204
    assert (await client.delete(url, headers=h.mod.headers)).status_code == 204
    [removed] = await audit_rows(rt, h.id, "member.role_remove")
    assert removed["data"] == {"role_id": helper["id"]}
    r = await client.get(h.url(f"/members/{h.member.id}"), headers=h.member.headers)
    assert r.json()["member"]["roles"] == []
    # Assigning a role to oneself or to a higher-ranked member is fine while the role is below the caller.
    assert (await client.put(h.url(f"/members/{h.owner.id}/roles/{helper['id']}"),
                             headers=h.mod.headers)).status_code == 204


async def test_assign_refusals(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    for method in (client.put, client.delete):
        denied(await method(h.url(f"/members/{h.mod.id}/roles/{h.roles['helper']['id']}"),
                            headers=h.member.headers), "MANAGE_ROLES")
        for name in ("mod", "top"):
            denied(await method(h.url(f"/members/{h.member.id}/roles/{h.roles[name]['id']}"),
                                headers=h.mod.headers), None)
        r = await method(h.url(f"/members/{h.member.id}/roles/4"), headers=h.mod.headers)
        assert error(r) == (404, "role.not_found")
        r = await method(h.url(f"/members/{h.outsider.id}/roles/{h.roles['helper']['id']}"), headers=h.mod.headers)
        assert error(r) == (404, "member.not_found")
        r = await method(h.url(f"/members/{h.member.id}/roles/{h.roles['helper']['id']}"),
                         headers=h.outsider.headers)
        assert error(r) == (404, "guild.not_found")


async def test_role_that_grants_view_sends_channel_create(client, accounts, rt, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    r = await client.post(h.url("/channels"), json={"name": "secret", "type": "text", "permission_overrides": [
        {"id": h.id, "type": "role", "deny": "VIEW_CHANNEL"},
        {"id": h.roles["helper"]["id"], "type": "role", "allow": "VIEW_CHANNEL"}]}, headers=h.owner.headers)
    assert r.status_code == 201, r.text
    secret = r.json()["channel"]["id"]
    await capture_events.reset()
    await give(client, h.mod, h.id, h.member, h.roles["helper"]["id"])
    await capture_events.settle()
    [created] = capture_events.of_type("CHANNEL_CREATE")
    assert created.data["id"] == secret and set(created.users) == h.ids(h.member)
    r = await client.get(f"{API}/channels/{secret}", headers=h.member.headers)
    assert r.status_code == 200
    await capture_events.reset()
    r = await client.delete(h.url(f"/members/{h.member.id}/roles/{h.roles['helper']['id']}"),
                            headers=h.mod.headers)
    assert r.status_code == 204
    await capture_events.settle()
    assert [(e.data["id"], set(e.users)) for e in capture_events.of_type("CHANNEL_DELETE")] == [
        (secret, h.ids(h.member))]


async def test_new_member_sees_roles_in_list(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    late = await accounts.register("late")
    await add_member(rt, h.id, late)
    r = await client.get(h.url("/roles"), headers=late.headers)
    assert len(r.json()["roles"]) == 4


async def test_roles_created_at_once_get_distinct_positions(client, accounts):
    import asyncio

    from tests.support.guilds import make_guild

    owner = await accounts.register("rolesowner")
    guild = await make_guild(client, owner)
    answers = await asyncio.gather(*(client.post(f"/api/v1/guilds/{guild['id']}/roles", json={"name": f"r{i}"},
                                                 headers=owner.headers) for i in range(4)))
    assert [r.status_code for r in answers] == [201] * 4, [r.text for r in answers]
    listed = (await client.get(f"/api/v1/guilds/{guild['id']}/roles", headers=owner.headers)).json()["roles"]
    positions = [r["position"] for r in listed if not r["is_default"]]
    assert sorted(positions) == [1, 2, 3, 4]

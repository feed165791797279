"""Rooms, categories and permission overrides (OpenAPI: createChannel, setPermissionOverride; docs/reference/permissions.md), through HTTP."""

from __future__ import annotations

from sqlalchemy import insert, select, update

from meadhall.core import permissions as perms
from meadhall.db.schema import audit_log, channels, member_roles, messages, permission_overrides, roles, users
from tests.support.factories import add_member, insert_role, update_default_permissions
from tests.support.guilds import make_guild, room

API = "/api/v1"
P = perms.P


async def names(client, account, guild_id):
    r = await client.get(f"{API}/guilds/{guild_id}/channels", headers=account.headers)
    assert r.status_code == 200, r.text
    return [c["name"] for c in r.json()["channels"]]


async def test_create_room_events_system_message_and_audit(client, accounts, rt, capture_events):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, a)
    await add_member(rt, guild["id"], b)
    await capture_events.reset()
    created = await room(client, a, guild["id"], name="Talk", topic="about things", slowmode_seconds=5)
    assert created["type"] == "text" and created["position"] == 1 and created["slowmode_seconds"] == 5
    assert created["user_limit"] is None and created["permission_overrides"] == []
    voice = await room(client, a, guild["id"], name="Voice", type="voice", user_limit=5)
    assert voice["user_limit"] == 5
    await capture_events.settle()
    creates = capture_events.of_type("CHANNEL_CREATE")
    assert [e.data["name"] for e in creates] == ["Talk", "Voice"]
    assert all(set(e.users) == {int(a.id), int(b.id)} for e in creates)
    system = [e.data for e in capture_events.of_type("MESSAGE_CREATE")]
    assert [(m["channel_id"], m["content"]) for m in system] == [
        (created["id"], "alice created this room."), (voice["id"], "alice created this room.")]
    async with rt.engine.connect() as conn:
        actions = (await conn.execute(select(audit_log.c.action, audit_log.c.target_id))).all()
    assert ("channel.create", int(created["id"])) in actions


async def test_create_refusals(client, accounts, rt):
    a, b, c = await accounts.register("alice"), await accounts.register("bob"), await accounts.register("carol")
    guild = await make_guild(client, a)
    await add_member(rt, guild["id"], b)
    r = await client.post(f"{API}/guilds/{guild['id']}/channels", json={"name": "x", "type": "text"},
                          headers=b.headers)
    assert r.status_code == 403 and r.json()["error"]["permission"] == "MANAGE_CHANNELS"
    r = await client.post(f"{API}/guilds/{guild['id']}/channels", json={"name": "x", "type": "text"},
                          headers=c.headers)
    assert r.status_code == 404 and r.json()["error"]["code"] == "guild.not_found"
    bad = [
        {"name": "x", "type": "forum"},
        {"name": "", "type": "text"},
        {"name": "x", "type": "text", "user_limit": 3},
        {"name": "x", "type": "voice", "user_limit": 100},
        {"name": "x", "type": "text", "slowmode_seconds": 21601},
        {"name": "x", "type": "text", "parent_id": guild["system_channel_id"]},
        {"name": "x", "type": "text", "permission_overrides": [
            {"id": guild["id"], "type": "role", "allow": "ADMINISTRATOR"}]},
        {"name": "x", "type": "text", "permission_overrides": [{"id": guild["id"], "type": "role", "deny": "NOPE"}]},
    ]
    for body in bad:
        r = await client.post(f"{API}/guilds/{guild['id']}/channels", json=body, headers=a.headers)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["error"]["code"] == "validation.failed"


async def test_room_limit(client, accounts, rt, clock):
    a = await accounts.register("alice")
    guild = await make_guild(client, a)
    async with rt.engine.begin() as conn:
        await conn.execute(insert(channels), [
            {"id": 50_000 + i, "guild_id": int(guild["id"]), "type": "text", "name": f"r{i}", "position": i,
             "slowmode_seconds": 0, "created_at": clock.now()} for i in range(499)])
    r = await client.post(f"{API}/guilds/{guild['id']}/channels", json={"name": "x", "type": "text"},
                          headers=a.headers)
    assert r.status_code == 409 and r.json()["error"]["code"] == "channel.limit_reached"


async def test_listing_respects_view_and_categories(client, accounts, rt, clock):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, a)
    gid = guild["id"]
    await add_member(rt, gid, b)
    cat = await room(client, a, gid, name="Staff", type="category",
                     permission_overrides=[{"id": gid, "type": "role", "deny": "VIEW_CHANNEL"}])
    inner = await room(client, a, gid, name="staff-chat", parent_id=cat["id"])
    # A room in a category starts with a copy of its overrides.
    assert inner["permission_overrides"] == [{"id": gid, "type": "role", "allow": "", "deny": "VIEW_CHANNEL"}]
    assert await names(client, b, gid) == ["general"]
    assert await names(client, a, gid) == ["general", "staff-chat", "Staff"]  # position, then id
    # A visible room makes its category listed even when the category itself is hidden.
    r = await client.put(f"{API}/channels/{inner['id']}/permissions/{b.id}",
                         json={"type": "member", "allow": "VIEW_CHANNEL"}, headers=a.headers)
    assert r.status_code == 204, r.text
    assert await names(client, b, gid) == ["general", "staff-chat", "Staff"]
    r = await client.get(f"{API}/channels/{cat['id']}", headers=b.headers)
    assert r.status_code == 404  # the category itself stays unseen


async def test_unseen_room_is_404_for_members_admin_sees_it(client, accounts, rt):
    a, b, root = await accounts.register("alice"), await accounts.register("bob"), await accounts.register("root")
    guild = await make_guild(client, a)
    await add_member(rt, guild["id"], b)
    hidden = await room(client, a, guild["id"], name="hidden",
                        permission_overrides=[{"id": guild["id"], "type": "role", "deny": "VIEW_CHANNEL"}])
    for method, extra in (("GET", {}), ("PATCH", {"json": {"name": "x"}}), ("DELETE", {})):
        r = await client.request(method, f"{API}/channels/{hidden['id']}", headers=b.headers, **extra)
        assert r.status_code == 404 and r.json()["error"]["code"] == "channel.not_found", method
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(root.id)).values(is_instance_admin=True))
    assert (await client.get(f"{API}/channels/{hidden['id']}", headers=root.headers)).status_code == 200
    assert "hidden" in await names(client, root, guild["id"])


async def test_role_overrides_deny_then_allow_and_user_override_wins(client, accounts, rt, clock):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, a)
    gid = guild["id"]
    await add_member(rt, gid, b)
    helper = await insert_role(rt, clock, gid, 777, 0, 1, holders=[b])
    muted = await insert_role(rt, clock, gid, 778, 0, 2, holders=[b])
    r1 = await room(client, a, gid, name="r1", permission_overrides=[
        {"id": gid, "type": "role", "deny": "VIEW_CHANNEL"},
        {"id": str(helper), "type": "role", "allow": "VIEW_CHANNEL"},
        {"id": str(muted), "type": "role", "deny": "VIEW_CHANNEL"},
    ])
    # Other roles: the union of deny is removed, then the union of allow is added: allow wins.
    assert "r1" in await names(client, b, gid)
    r = await client.put(f"{API}/channels/{r1['id']}/permissions/{b.id}",
                         json={"type": "member", "deny": "VIEW_CHANNEL"}, headers=a.headers)
    assert r.status_code == 204
    assert "r1" not in await names(client, b, gid)


async def test_override_changes_send_create_and_delete_to_who_gains_or_loses_view(client, accounts, rt,
                                                                                 capture_events):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, a)
    gid = guild["id"]
    await add_member(rt, gid, b)
    target = await room(client, a, gid, name="target")
    await capture_events.reset()
    r = await client.put(f"{API}/channels/{target['id']}/permissions/{gid}",
                         json={"type": "role", "deny": "VIEW_CHANNEL"}, headers=a.headers)
    assert r.status_code == 204
    await capture_events.settle()
    assert [e.users for e in capture_events.of_type("CHANNEL_DELETE")] == [(int(b.id),)]
    assert [e.users for e in capture_events.of_type("CHANNEL_UPDATE")] == [(int(a.id),)]
    await capture_events.reset()
    r = await client.delete(f"{API}/channels/{target['id']}/permissions/{gid}", headers=a.headers)
    assert r.status_code == 204
    await capture_events.settle()
    assert [e.users for e in capture_events.of_type("CHANNEL_CREATE")] == [(int(b.id),)]
    r = await client.delete(f"{API}/channels/{target['id']}/permissions/{gid}", headers=a.headers)
    assert r.status_code == 404 and r.json()["error"]["code"] == "override.not_found"
    async with rt.engine.connect() as conn:
        actions = (await conn.execute(select(audit_log.c.action))).scalars().all()
    assert "channel.override_update" in actions and "channel.override_delete" in actions


async def test_override_refusals(client, accounts, rt, clock):
    a, b, c = await accounts.register("alice"), await accounts.register("bob"), await accounts.register("carol")
    guild = await make_guild(client, a)
    gid = guild["id"]
    await add_member(rt, gid, b)
    general = guild["system_channel_id"]
    url = f"{API}/channels/{general}/permissions/{gid}"
    r = await client.put(url, json={"type": "role", "deny": "SEND_MESSAGES"}, headers=b.headers)
    assert r.status_code == 403 and r.json()["error"]["permission"] == "MANAGE_ROLES"
    # A manager may only move permissions they hold: MANAGE_ROLES but not BAN_MEMBERS.
    await insert_role(rt, clock, gid, 900, P.MANAGE_ROLES, 1, holders=[b])
    r = await client.put(url, json={"type": "role", "deny": "BAN_MEMBERS"}, headers=b.headers)
    assert r.status_code == 403 and r.json()["error"]["permission"] is None
    r = await client.put(url, json={"type": "role", "deny": "SEND_MESSAGES"}, headers=b.headers)
    assert r.status_code == 204
    r = await client.put(url, json={"type": "role", "allow": "ADMINISTRATOR"}, headers=a.headers)
    assert r.status_code == 422
    r = await client.put(f"{API}/channels/{general}/permissions/424242", json={"type": "role"}, headers=a.headers)
    assert r.status_code == 404 and r.json()["error"]["code"] == "role.not_found"
    r = await client.put(f"{API}/channels/{general}/permissions/{c.id}", json={"type": "member"},
                         headers=a.headers)
    assert r.status_code == 404 and r.json()["error"]["code"] == "member.not_found"


async def test_update_room(client, accounts, rt, capture_events):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, a)
    await add_member(rt, guild["id"], b)
    general = guild["system_channel_id"]
    r = await client.patch(f"{API}/channels/{general}", json={"name": "lobby"}, headers=b.headers)
    assert r.status_code == 403 and r.json()["error"]["permission"] == "MANAGE_CHANNELS"
    await capture_events.reset()
    r = await client.patch(f"{API}/channels/{general}", json={"name": "lobby", "topic": "hi", "slowmode_seconds": 30},
                           headers=a.headers)
    assert r.status_code == 200
    ch = r.json()["channel"]
    assert (ch["name"], ch["topic"], ch["slowmode_seconds"]) == ("lobby", "hi", 30)
    await capture_events.settle()
    [ev] = capture_events.of_type("CHANNEL_UPDATE")
    assert set(ev.users) == {int(a.id), int(b.id)}
    r = await client.patch(f"{API}/channels/{general}", json={"user_limit": 4}, headers=a.headers)
    assert r.status_code == 422
    r = await client.patch(f"{API}/channels/{general}", json={"name": None}, headers=a.headers)
    assert r.status_code == 422


async def test_delete_room_and_category(client, accounts, rt, capture_events):
    a = await accounts.register("alice")
    guild = await make_guild(client, a)
    gid = guild["id"]
    cat = await room(client, a, gid, name="cat", type="category")
    inner = await room(client, a, gid, name="inner", parent_id=cat["id"])
    await capture_events.reset()
    assert (await client.delete(f"{API}/channels/{cat['id']}", headers=a.headers)).status_code == 204
    await capture_events.settle()
    assert [e.data["id"] for e in capture_events.of_type("CHANNEL_DELETE")] == [cat["id"]]
    [orphan] = capture_events.of_type("CHANNEL_UPDATE")
    assert orphan.data["id"] == inner["id"] and orphan.data["parent_id"] is None
    assert (await client.delete(f"{API}/channels/{inner['id']}", headers=a.headers)).status_code == 204
    async with rt.engine.connect() as conn:
        left = (await conn.execute(select(messages.c.channel_id))).scalars().all()
    assert int(inner["id"]) not in left  # its messages went with it
    # Deleting the system room clears system_channel_id.
    assert (await client.delete(f"{API}/channels/{guild['system_channel_id']}", headers=a.headers)).status_code == 204
    g = (await client.get(f"{API}/guilds/{gid}", headers=a.headers)).json()["guild"]
    assert g["system_channel_id"] is None


async def test_reorder(client, accounts, rt, capture_events):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, a)
    gid = guild["id"]
    await add_member(rt, gid, b)
    cat = await room(client, a, gid, name="cat", type="category")
    two = await room(client, a, gid, name="two")
    moves = {"channels": [{"id": two["id"], "position": 0, "parent_id": cat["id"]},
                          {"id": guild["system_channel_id"], "position": 5}]}
    assert (await client.patch(f"{API}/guilds/{gid}/channels", json=moves, headers=b.headers)).status_code == 403
    await capture_events.reset()
    r = await client.patch(f"{API}/guilds/{gid}/channels", json=moves, headers=a.headers)
    assert r.status_code == 200, r.text
    changed = {c["id"]: c for c in r.json()["channels"]}
    assert changed[two["id"]]["parent_id"] == cat["id"] and changed[guild["system_channel_id"]]["position"] == 5
    await capture_events.settle()
    assert len(capture_events.of_type("CHANNEL_UPDATE")) == 2
    r = await client.patch(f"{API}/guilds/{gid}/channels", json={"channels": [{"id": "1", "position": 0}]},
                           headers=a.headers)
    assert r.status_code == 422


async def test_listing_500_rooms_50_roles_costs_bounded_queries(client, accounts, rt, clock, assert_query_count):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, a)
    gid = int(guild["id"])
    await add_member(rt, guild["id"], b)
    now = clock.now()
    async with rt.engine.begin() as conn:
        await conn.execute(insert(roles), [
            {"id": 70_000 + i, "guild_id": gid, "name": f"role{i}", "color": 0, "position": i + 1,
             "permissions": 0, "hoist": False, "is_default": False, "created_at": now} for i in range(50)])
        await conn.execute(insert(member_roles), [
            {"guild_id": gid, "user_id": int(b.id), "role_id": 70_000 + i} for i in range(0, 50, 2)])
        await conn.execute(insert(channels), [
            {"id": 80_000 + i, "guild_id": gid, "type": "text", "name": f"room{i}", "position": i,
             "slowmode_seconds": 0, "created_at": now} for i in range(499)])
        await conn.execute(insert(permission_overrides), [
            {"channel_id": 80_000 + i, "target_id": 70_000 + (i % 50), "kind": "role",
             "allow": int(P.VIEW_CHANNEL), "deny": 0} for i in range(499)] + [
            {"channel_id": 80_000 + i, "target_id": gid, "kind": "role", "allow": 0,
             "deny": int(P.VIEW_CHANNEL)} for i in range(0, 499, 3)])
    with assert_query_count(10):
        r = await client.get(f"{API}/guilds/{gid}/channels", headers=b.headers)
    assert r.status_code == 200
    visible = r.json()["channels"]
    # Hidden from the default role every third room, shown again where one of bob's roles allows it.
    expected = 1 + sum(1 for i in range(499) if i % 3 != 0 or (i % 50) % 2 == 0)
    assert len(visible) == expected


async def test_positions_are_bounded_on_create_update_and_reorder(client, accounts, rt):
    a = await accounts.register("alice")
    guild = await make_guild(client, a)
    gid, general = guild["id"], guild["system_channel_id"]

    def refused(r, field):
        assert r.status_code == 422, r.text
        assert r.json()["error"]["code"] == "validation.failed"
        assert field in {d["field"] for d in r.json()["error"]["details"]}, r.text

    for bad in (-1, 2_147_483_648, 10**30):
        refused(await client.post(f"{API}/guilds/{gid}/channels", json={"name": "x", "type": "text", "position": bad},
                                  headers=a.headers), "position")
        refused(await client.patch(f"{API}/channels/{general}", json={"position": bad}, headers=a.headers), "position")
        refused(await client.patch(f"{API}/guilds/{gid}/channels",
                                   json={"channels": [{"id": general, "position": bad}]}, headers=a.headers),
                "channels.0.position")
    # The top of the range is stored (a 32-bit integer on PostgreSQL), and a room created after it without a
    # position takes the last place instead of overflowing.
    top = await room(client, a, gid, name="top", position=2_147_483_647)
    assert top["position"] == 2_147_483_647
    after = await room(client, a, gid, name="after")
    assert after["position"] == 2_147_483_647
    r = await client.patch(f"{API}/guilds/{gid}/channels", json={"channels": [{"id": general, "position": 2_147_483_647}]},
                           headers=a.headers)
    assert r.status_code == 200 and r.json()["channels"][0]["position"] == 2_147_483_647, r.text


async def test_reorder_never_reveals_rooms_the_caller_cannot_view(client, accounts, rt, capture_events):
    a, b = await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, a)
    gid, general = guild["id"], guild["system_channel_id"]
    await add_member(rt, gid, b)
    await update_default_permissions(rt, gid, perms.DEFAULT | P.MANAGE_CHANNELS)
    hidden_override = [{"id": b.id, "type": "member", "deny": "VIEW_CHANNEL"}]
    private = await room(client, a, gid, name="private", permission_overrides=hidden_override)
    secret_cat = await room(client, a, gid, name="secret", type="category", permission_overrides=hidden_override)
    unknown = await client.patch(f"{API}/guilds/{gid}/channels", json={"channels": [{"id": "1", "position": 0}]},
                                 headers=b.headers)
    assert unknown.status_code == 422

    await capture_events.reset()
    # Naming the private room is answered exactly like naming a room that does not exist, and moves nothing.
    r = await client.patch(f"{API}/guilds/{gid}/channels",
                           json={"channels": [{"id": general, "position": 7}, {"id": private["id"], "position": 0}]},
                           headers=b.headers)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"] == [{"field": "channels.id", "message": f"unknown room {private['id']}"}]
    assert r.json()["error"]["details"][0]["message"].replace(private["id"], "1") == \
        unknown.json()["error"]["details"][0]["message"]
    # A hidden category cannot be used as a parent either.
    r = await client.patch(f"{API}/guilds/{gid}/channels",
                           json={"channels": [{"id": general, "position": 7, "parent_id": secret_cat["id"]}]},
                           headers=b.headers)
    assert r.status_code == 422 and r.json()["error"]["details"][0]["field"] == "parent_id", r.text
    r = await client.patch(f"{API}/channels/{general}", json={"parent_id": secret_cat["id"]}, headers=b.headers)
    assert r.status_code == 422 and r.json()["error"]["details"][0]["field"] == "parent_id", r.text
    async with rt.engine.connect() as conn:
        positions = dict((await conn.execute(select(channels.c.id, channels.c.position))).all())
    assert positions[int(private["id"])] == private["position"] and positions[int(general)] == 0

    r = await client.patch(f"{API}/guilds/{gid}/channels", json={"channels": [{"id": general, "position": 7}]},
                           headers=b.headers)
    assert r.status_code == 200, r.text
    assert [c["id"] for c in r.json()["channels"]] == [general]
    await capture_events.settle()
    for ev in capture_events.of_type("CHANNEL_UPDATE"):
        assert ev.data["id"] != private["id"] or int(b.id) not in ev.users
    # The owner still sees and moves every room.
    r = await client.patch(f"{API}/guilds/{gid}/channels", json={"channels": [{"id": private["id"], "position": 3}]},
                           headers=a.headers)
    assert r.status_code == 200 and [c["id"] for c in r.json()["channels"]] == [private["id"]], r.text

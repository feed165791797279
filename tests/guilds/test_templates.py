"""Personal templates (OpenAPI: createTemplate) and guilds built from them (OpenAPI: createGuild), through HTTP."""

from __future__ import annotations

from sqlalchemy import func, insert, select, update

from meadhall.core import permissions as perms
from meadhall.db.schema import audit_log, channels, guilds, member_roles, roles, templates
from meadhall.guilds.roles import queries as role_queries
from meadhall.guilds.rooms import queries as room_queries
from meadhall.guilds.templates.service import capture_structure, structure_size
from tests.support.factories import insert_member, update_default_permissions
from tests.support.guilds import make_guild

P = perms.P
API = "/api/v1"


# ---- helpers -----------------------------------------------------------------------------------


async def add_role(rt, guild_id, name, position, mask, color=0, hoist=False):
    role_id = rt.ids.next()
    async with rt.engine.begin() as conn:
        await conn.execute(insert(roles).values(
            id=role_id, guild_id=int(guild_id), name=name, color=color, position=position, permissions=int(mask),
            hoist=hoist, frame_id=None, icon_id=None, is_default=False, created_at=rt.clock.now()))
    return role_id


async def create_room(client, account, guild_id, **body):
    r = await client.post(f"{API}/guilds/{guild_id}/channels", json=body, headers=account.headers)
    assert r.status_code == 201, r.text
    return r.json()["channel"]


async def save_template(client, account, guild_id, name="T", **extra):
    return await client.post(f"{API}/guild-templates", json={"guild_id": guild_id, "name": name, **extra},
                             headers=account.headers)


async def built_source(client, rt, owner):
    """A guild with a custom default role, two roles, two categories and rooms inside and outside them."""
    g = await make_guild(client, owner)
    default_mask = perms.DEFAULT & ~P.SEND_SCREAMS
    await update_default_permissions(rt, g["id"], default_mask)
    await add_role(rt, g["id"], "Moderator", 1, P.KICK_MEMBERS | P.BAN_MEMBERS, color=3447003, hoist=True)
    await add_role(rt, g["id"], "Admin", 2, P.ADMINISTRATOR)
    talk = await create_room(client, owner, g["id"], name="Talk", type="category", position=0)
    await create_room(client, owner, g["id"], name="Games", type="category", position=1)
    await create_room(client, owner, g["id"], name="lobby", type="text", parent_id=talk["id"], topic="Say hi",
                      slowmode_seconds=30, position=1)
    games = [c for c in (await client.get(f"{API}/guilds/{g['id']}/channels", headers=owner.headers)).json()["channels"]
             if c["name"] == "Games"][0]
    await create_room(client, owner, g["id"], name="voice-1", type="voice", parent_id=games["id"], user_limit=5,
                      position=2)
    return g, default_mask


EXPECTED_STRUCTURE = {
    "roles": [
        {"name": "@user", "permissions": perms.to_string(perms.DEFAULT & ~P.SEND_SCREAMS), "color": 0, "hoist": False,
         "is_default": True},
        {"name": "Moderator", "permissions": "KICK_MEMBERS|BAN_MEMBERS", "color": 3447003, "hoist": True,
         "is_default": False},
        {"name": "Admin", "permissions": "ADMINISTRATOR", "color": 0, "hoist": False, "is_default": False},
    ],
    "categories": [{"name": "Talk", "position": 0}, {"name": "Games", "position": 1}],
    "channels": [
        {"name": "general", "type": "text", "topic": None, "position": 0, "slowmode_seconds": 0, "user_limit": None,
         "category": None},
        {"name": "lobby", "type": "text", "topic": "Say hi", "position": 1, "slowmode_seconds": 30,
         "user_limit": None, "category": "Talk"},
        {"name": "voice-1", "type": "voice", "topic": None, "position": 2, "slowmode_seconds": 0, "user_limit": 5,
         "category": "Games"},
    ],
}


# ---- create / list / delete --------------------------------------------------------------------


async def test_save_template_captures_the_structure(client, accounts, rt):
    a = await accounts.register("alice")
    g, _ = await built_source(client, rt, a)
    r = await save_template(client, a, g["id"], name="  My layout ", description="for clubs")
    assert r.status_code == 201, r.text
    t = r.json()["template"]
    assert set(t) == {"id", "name", "description", "owner_id", "source_guild_id", "structure", "created_at"}
    assert t["name"] == "My layout" and t["description"] == "for clubs"
    assert t["owner_id"] == a.id and t["source_guild_id"] == g["id"]
    assert t["created_at"].endswith("Z")
    assert t["structure"] == EXPECTED_STRUCTURE
    async with rt.engine.connect() as conn:
        [entry] = (await conn.execute(select(audit_log).where(audit_log.c.action == "template.create"))).mappings()
    assert entry["guild_id"] == int(g["id"]) and entry["actor_id"] == int(a.id)
    assert entry["target_type"] == "template" and entry["target_id"] == int(t["id"])


async def test_list_mine_newest_first_and_only_own(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    ga, gb = await make_guild(client, a), await make_guild(client, b)
    first = (await save_template(client, a, ga["id"], name="one")).json()["template"]
    second = (await save_template(client, a, ga["id"], name="two")).json()["template"]
    assert (await save_template(client, b, gb["id"], name="bobs")).status_code == 201
    r = await client.get(f"{API}/guild-templates/mine", headers=a.headers)
    assert r.status_code == 200
    assert [t["id"] for t in r.json()["templates"]] == [second["id"], first["id"]]
    assert r.json()["templates"][1] == first


async def test_validation(client, accounts):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    for body in ({"guild_id": g["id"], "name": ""}, {"guild_id": g["id"], "name": "x" * 101},
                 {"guild_id": g["id"], "name": "ok", "description": "d" * 501},
                 {"guild_id": "abc", "name": "ok"}, {"guild_id": "9" * 20, "name": "ok"}, {"name": "ok"}):
        r = await client.post(f"{API}/guild-templates", json=body, headers=a.headers)
        assert r.status_code == 422, body
        assert r.json()["error"]["code"] == "validation.failed"
    ok = await save_template(client, a, g["id"], name="x" * 100, description="d" * 500)
    assert ok.status_code == 201


async def test_requires_manage_guild_and_membership(client, accounts, rt):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    g = await make_guild(client, a)
    r = await save_template(client, b, g["id"])
    assert r.status_code == 404 and r.json()["error"]["code"] == "guild.not_found"
    r = await save_template(client, b, "123456789")
    assert r.status_code == 404 and r.json()["error"]["code"] == "guild.not_found"
    await insert_member(rt, g["id"], b.id)
    r = await save_template(client, b, g["id"])
    assert r.status_code == 403
    assert r.json()["error"] == {"code": "perm.denied", "message": r.json()["error"]["message"],
                                 "permission": "MANAGE_GUILD"}
    await update_default_permissions(rt, g["id"], perms.DEFAULT | P.MANAGE_GUILD)
    r = await save_template(client, b, g["id"])
    assert r.status_code == 201
    assert r.json()["template"]["owner_id"] == b.id


async def test_limit_of_twenty_per_user(client, accounts, rt):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    for i in range(20):
        assert (await save_template(client, a, g["id"], name=f"t{i}")).status_code == 201
    r = await save_template(client, a, g["id"], name="t20")
    assert r.status_code == 409 and r.json()["error"]["code"] == "template.limit_reached"
    # The limit is per user: another user saving the same guild is not affected.
    b = await accounts.register("bob")
    await insert_member(rt, g["id"], b.id)
    await update_default_permissions(rt, g["id"], perms.DEFAULT | P.MANAGE_GUILD)
    assert (await save_template(client, b, g["id"])).status_code == 201
    # Deleting one frees a place.
    mine = (await client.get(f"{API}/guild-templates/mine", headers=a.headers)).json()["templates"]
    assert len(mine) == 20
    assert (await client.delete(f"{API}/guild-templates/{mine[0]['id']}", headers=a.headers)).status_code == 204
    assert (await save_template(client, a, g["id"], name="again")).status_code == 201


async def test_structure_above_16_kib_is_refused(client, accounts, rt):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    now = rt.clock.now()
    rows = [
        {"id": rt.ids.next(), "guild_id": int(g["id"]), "type": "text", "name": f"{i:03d}" + "r" * 97, "topic": None,
         "position": i + 1, "parent_id": None, "slowmode_seconds": 0, "user_limit": None,
         "background_file_id": None, "icon_file_id": None, "dm_owner_id": None, "last_message_id": None,
         "created_at": now}
        for i in range(499)
    ]
    async with rt.engine.begin() as conn:
        await conn.execute(insert(channels), rows)
    r = await save_template(client, a, g["id"])
    assert r.status_code == 422 and r.json()["error"]["code"] == "template.too_large"
    assert (await client.get(f"{API}/guild-templates/mine", headers=a.headers)).json()["templates"] == []


def room_row(rt, guild_id, name, position):
    return {"id": rt.ids.next(), "guild_id": int(guild_id), "type": "text", "name": name, "topic": None,
            "position": position, "parent_id": None, "slowmode_seconds": 0, "user_limit": None,
            "background_file_id": None, "icon_file_id": None, "dm_owner_id": None, "last_message_id": None,
            "created_at": rt.clock.now()}


async def structure_bytes(rt, guild_id):
    async with rt.engine.connect() as conn:
        return structure_size(capture_structure(await role_queries.select_roles(conn, int(guild_id)),
                                                await room_queries.select_channels(conn, int(guild_id))))


async def test_structure_limit_is_16384_bytes_inclusive(client, accounts, rt):
    """The limit is on the compact UTF-8 JSON of `structure`: exactly 16384 bytes is kept, one more is not."""
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    ids, position = [], 1
    while 16384 - await structure_bytes(rt, g["id"]) > 200:
        row = room_row(rt, g["id"], "n" * 50, position)
        async with rt.engine.begin() as conn:
            await conn.execute(insert(channels).values(row))
        ids.append(row["id"])
        position += 1
    gap = 16384 - await structure_bytes(rt, g["id"])
    async with rt.engine.begin() as conn:
        for room_id in ids:
            grow = min(gap, 50)
            await conn.execute(update(channels).where(channels.c.id == room_id).values(name="n" * (50 + grow)))
            gap -= grow
    assert await structure_bytes(rt, g["id"]) == 16384
    ok = await save_template(client, a, g["id"], name="exact")
    assert ok.status_code == 201, ok.text
    assert structure_size(ok.json()["template"]["structure"]) == 16384
    async with rt.engine.begin() as conn:
        await conn.execute(update(channels).where(channels.c.id == ids[-1]).values(name="n" * 51))
    assert await structure_bytes(rt, g["id"]) == 16385
    r = await save_template(client, a, g["id"], name="over")
    assert r.status_code == 422 and r.json()["error"]["code"] == "template.too_large"


async def test_delete_rules(client, accounts, rt):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    g = await make_guild(client, a)
    t = (await save_template(client, a, g["id"])).json()["template"]
    for raw in (t["id"], "nope", "99999999999999999999"):
        r = await client.delete(f"{API}/guild-templates/{raw}", headers=b.headers)
        assert r.status_code == 404 and r.json()["error"]["code"] == "template.not_found"
    assert (await client.delete(f"{API}/guild-templates/{t['id']}", headers=a.headers)).status_code == 204
    r = await client.delete(f"{API}/guild-templates/{t['id']}", headers=a.headers)
    assert r.status_code == 404 and r.json()["error"]["code"] == "template.not_found"


async def test_delete_checks_manage_guild_only_while_a_member_of_the_source(client, accounts, rt):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    g = await make_guild(client, a)
    await insert_member(rt, g["id"], b.id)
    await update_default_permissions(rt, g["id"], perms.DEFAULT | P.MANAGE_GUILD)
    first = (await save_template(client, b, g["id"], name="one")).json()["template"]
    second = (await save_template(client, b, g["id"], name="two")).json()["template"]
    await update_default_permissions(rt, g["id"], perms.DEFAULT)
    r = await client.delete(f"{API}/guild-templates/{first['id']}", headers=b.headers)
    assert r.status_code == 403 and r.json()["error"]["permission"] == "MANAGE_GUILD"
    # After leaving the source guild there is no check.
    assert (await client.delete(f"{API}/users/@me/guilds/{g['id']}", headers=b.headers)).status_code == 204
    assert (await client.delete(f"{API}/guild-templates/{first['id']}", headers=b.headers)).status_code == 204
    # A deleted source guild leaves source_guild_id null, and no check either.
    async with rt.engine.begin() as conn:
        await conn.execute(guilds.delete().where(guilds.c.id == int(g["id"])))
    [left] = (await client.get(f"{API}/guild-templates/mine", headers=b.headers)).json()["templates"]
    assert left["id"] == second["id"] and left["source_guild_id"] is None
    assert (await client.delete(f"{API}/guild-templates/{second['id']}", headers=b.headers)).status_code == 204


# ---- guilds from templates ---------------------------------------------------------------------


async def test_guild_from_template(client, accounts, rt, capture_events):
    a = await accounts.register("alice")
    src, default_mask = await built_source(client, rt, a)
    t = (await save_template(client, a, src["id"])).json()["template"]
    ref = f"personal:{t['id']}"
    r = await client.post(f"{API}/guilds", json={"name": "Copy", "template_id": ref}, headers=a.headers)
    assert r.status_code == 201, r.text
    g = r.json()["guild"]
    assert g["name"] == "Copy" and g["owner_id"] == a.id and g["member_count"] == 1 and g["is_main"] is False

    async with rt.engine.connect() as conn:
        role_rows = (await conn.execute(select(roles).where(roles.c.guild_id == int(g["id"]))
                                        .order_by(roles.c.position))).mappings().all()
        held = (await conn.execute(select(func.count()).select_from(member_roles)
                                   .where(member_roles.c.guild_id == int(g["id"])))).scalar_one()
        [create] = (await conn.execute(select(audit_log).where(audit_log.c.action == "guild.create",
                                                               audit_log.c.guild_id == int(g["id"])))).mappings()
    assert [(r["name"], r["position"], r["permissions"], r["color"], r["hoist"], r["is_default"]) for r in role_rows] == [
        ("@user", 0, int(default_mask), 0, False, True),
        ("Moderator", 1, int(P.KICK_MEMBERS | P.BAN_MEMBERS), 3447003, True, False),
        ("Admin", 2, int(P.ADMINISTRATOR), 0, False, False),
    ]
    assert role_rows[0]["id"] == int(g["id"])
    assert held == 0  # the creator holds no extra role
    assert create["data"] == {"template_id": ref} and create["actor_id"] == int(a.id)

    rooms = (await client.get(f"{API}/guilds/{g['id']}/channels", headers=a.headers)).json()["channels"]
    by_name = {c["name"]: c for c in rooms}
    assert [c["name"] for c in rooms] == ["Talk", "general", "Games", "lobby", "voice-1"]
    assert by_name["Talk"]["type"] == "category" and by_name["Talk"]["position"] == 0
    assert by_name["Games"]["position"] == 1
    assert by_name["general"]["parent_id"] is None
    lobby = by_name["lobby"]
    assert (lobby["parent_id"], lobby["topic"], lobby["slowmode_seconds"], lobby["position"], lobby["user_limit"]) == (
        by_name["Talk"]["id"], "Say hi", 30, 1, None)
    voice = by_name["voice-1"]
    assert (voice["type"], voice["parent_id"], voice["user_limit"], voice["position"]) == (
        "voice", by_name["Games"]["id"], 5, 2)
    assert all(c["permission_overrides"] == [] for c in rooms)
    assert g["system_channel_id"] == by_name["general"]["id"]
    await capture_events.settle()
    assert [e for e in capture_events.of_type("GUILD_CREATE") if e.data["id"] == g["id"]]


async def test_template_edge_cases_unknown_category_and_system_room(client, accounts, rt):
    """A room naming an unknown category gets no parent; the first text room in the template's order
    becomes the system room even when voice rooms come first."""
    a = await accounts.register("alice")
    src = await make_guild(client, a)
    t = (await save_template(client, a, src["id"])).json()["template"]
    structure = {
        "roles": [{"name": "ignored", "permissions": "VIEW_CHANNEL", "color": 0, "hoist": False, "is_default": True}],
        "categories": [{"name": "Known", "position": 0}],
        "channels": [
            {"name": "hall", "type": "voice", "topic": None, "position": 0, "slowmode_seconds": 0, "user_limit": 0,
             "category": "Known"},
            {"name": "stray", "type": "text", "topic": None, "position": 1, "slowmode_seconds": 0,
             "user_limit": None, "category": "Nowhere"},
            {"name": "second", "type": "text", "topic": None, "position": 2, "slowmode_seconds": 0,
             "user_limit": None, "category": "Known"},
        ],
    }
    async with rt.engine.begin() as conn:
        await conn.execute(update(templates).where(templates.c.id == int(t["id"])).values(structure=structure))
    r = await client.post(f"{API}/guilds", json={"name": "Edge", "template_id": f"personal:{t['id']}"},
                          headers=a.headers)
    assert r.status_code == 201, r.text
    g = r.json()["guild"]
    rooms = {c["name"]: c for c in (await client.get(f"{API}/guilds/{g['id']}/channels",
                                                     headers=a.headers)).json()["channels"]}
    assert rooms["stray"]["parent_id"] is None
    assert rooms["second"]["parent_id"] == rooms["Known"]["id"]
    assert rooms["hall"]["user_limit"] == 0
    assert g["system_channel_id"] == rooms["stray"]["id"]
    async with rt.engine.connect() as conn:
        default = (await conn.execute(select(roles).where(roles.c.id == int(g["id"])))).mappings().one()
    assert default["name"] == "@user" and default["permissions"] == int(P.VIEW_CHANNEL)


async def test_template_ids_foreign_unknown_malformed(client, accounts, rt):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    src = await make_guild(client, a)
    t = (await save_template(client, a, src["id"])).json()["template"]
    for ref in (f"personal:{t['id']}", "personal:123"):
        r = await client.post(f"{API}/guilds", json={"name": "Nope", "template_id": ref}, headers=b.headers)
        assert r.status_code == 404 and r.json()["error"]["code"] == "template.not_found", ref
    for ref in (t["id"], f"server:{t['id']}", "personal:", "personal:abc", "personal:" + "9" * 20, 5):
        r = await client.post(f"{API}/guilds", json={"name": "Nope", "template_id": ref}, headers=a.headers)
        assert r.status_code == 422 and r.json()["error"]["code"] == "validation.failed", ref
    assert (await client.get(f"{API}/users/@me/guilds", headers=b.headers)).json()["guilds"] == []
    assert len((await client.get(f"{API}/users/@me/guilds", headers=a.headers)).json()["guilds"]) == 1


async def test_template_survives_source_changes(client, accounts, rt):
    """A template is a snapshot: later changes to the source guild do not alter it."""
    a = await accounts.register("alice")
    src = await make_guild(client, a)
    t = (await save_template(client, a, src["id"])).json()["template"]
    await create_room(client, a, src["id"], name="later", type="text")
    [again] = (await client.get(f"{API}/guild-templates/mine", headers=a.headers)).json()["templates"]
    assert again["structure"] == t["structure"]
    assert [c["name"] for c in again["structure"]["channels"]] == ["general"]

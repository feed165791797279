"""Guild events over a real WebSocket (docs/reference/events.md): GUILD_*, MEMBER_* and ROLE_* reach the members,
CHANNEL_* those who may view the room (CHANNEL_CREATE / CHANNEL_DELETE when a change gives or takes a room),
and nobody outside the guild, instance administrators included."""

from __future__ import annotations

from datetime import timedelta

from meadhall.core.clock import iso
from tests.support.delivery import (
    check_channel,
    check_member,
    check_role,
    of_type,
    online,
    refused,
    second_device,
    seen,
    types,
    until,
)
from tests.support.factories import add_member, make_admin
from tests.support.guilds import accept_invite, give, make_guild, make_invite, make_role, override, room
from tests.support.http import API
from tests.support.personas import hall
from tests.support.shapes import GUILD_FIELDS, SNAPSHOT_FIELDS, SUMMARY_FIELDS, is_id

CHANNEL_EVENTS = ("CHANNEL_CREATE", "CHANNEL_UPDATE", "CHANNEL_DELETE")
GUILD_EVENTS = ("GUILD_CREATE", "GUILD_UPDATE", "GUILD_DELETE", "MEMBER_ADD", "MEMBER_UPDATE", "MEMBER_REMOVE",
                "ROLE_CREATE", "ROLE_UPDATE", "ROLE_DELETE", *CHANNEL_EVENTS, "MESSAGE_CREATE")


async def secret_room(client, h, role_id=None, name="secret"):
    """A room the default role may not view (only the owner, instance administrators and `role_id`)."""
    overrides = [{"id": h.id, "type": "role", "deny": "VIEW_CHANNEL"}]
    if role_id is not None:
        overrides.append({"id": role_id, "type": "role", "allow": "VIEW_CHANNEL"})
    return await room(client, h.owner, h.id, name=name, permission_overrides=overrides)


def channel_events(got):
    return [(t, d["id"]) for t, d in got if t in CHANNEL_EVENTS]


# ---- GUILD_CREATE / GUILD_UPDATE / GUILD_DELETE -------------------------------------------------------------------

async def test_guild_create_reaches_the_creators_devices_only(gateway, client, accounts):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    phone = await second_device(client, alice)
    a1, a2, b = await online(gateway, client, alice, phone, bob)
    guild = await make_guild(client, alice, "Mead Hall")
    for conn in (a1, a2):
        snap = await conn.dispatch("GUILD_CREATE")
        assert set(snap) == SNAPSHOT_FIELDS, set(snap) ^ SNAPSHOT_FIELDS
        assert {k: snap[k] for k in GUILD_FIELDS} == guild
        assert snap["owner_id"] == alice.id and snap["member_count"] == 1
        assert [c["name"] for c in snap["channels"]] == ["general"]
        assert [(r["name"], r["id"], r["is_default"]) for r in snap["roles"]] == [("@user", guild["id"], True)]
        check_member(snap["member"], guild["id"], alice.id)
        assert (snap["emojis"], snap["sounds"], snap["cosmetics"], snap["voice_states"]) == ([], [], [], [])
    await refused(client, bob, b)


async def test_join_by_invite_gives_the_joiner_its_snapshot_and_members_the_new_member(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    secret = await secret_room(client, h)
    joiner = await accounts.register("joiner")
    invite = await make_invite(client, h.owner, h.general)
    owner, a, new, out = await online(gateway, client, h.owner, h.a, joiner, h.outsider)
    r = await accept_invite(client, joiner, invite["code"])
    assert r.status_code == 200, r.text
    snap = await new.dispatch("GUILD_CREATE")
    assert set(snap) == SNAPSHOT_FIELDS and snap["id"] == h.id and snap["member_count"] == 4
    assert [c["id"] for c in snap["channels"]] == [h.general]  # not the secret room
    check_member(snap["member"], h.id, joiner.id)
    for conn in (owner, a):
        got = await until(conn, "MESSAGE_CREATE")
        [added] = of_type(got, "MEMBER_ADD")
        check_member(added, h.id, joiner.id)
        assert added["roles"] == [] and added["nick"] is None and added["timeout_until"] is None
        assert got[-1][1]["system_event"]["type"] == "member_join"
        assert got[-1][1]["system_event"]["user_id"] == joiner.id
    await refused(client, h.outsider, out)
    assert secret["id"] not in [c["id"] for c in snap["channels"]]


async def test_the_joiner_receives_its_own_member_add(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    joiner = await accounts.register("joiner")
    invite = await make_invite(client, h.owner, h.general)
    (new,) = await online(gateway, client, joiner)
    assert (await accept_invite(client, joiner, invite["code"])).status_code == 200
    got = await until(new, "MESSAGE_CREATE")
    assert sorted(types(got)) == ["GUILD_CREATE", "MEMBER_ADD", "MESSAGE_CREATE"]
    check_member(of_type(got, "MEMBER_ADD")[0], h.id, joiner.id)


async def test_guild_update_reaches_every_member_and_no_one_else(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    r = await client.patch(f"{API}/guilds/{h.id}", json={"name": "Renamed", "description": "new"},
                           headers=h.owner.headers)
    assert r.status_code == 200, r.text
    for conn in (owner, a, b):  # a guild event: members, whatever rooms they see
        got = await conn.dispatch("GUILD_UPDATE")
        assert set(got) == GUILD_FIELDS and got == r.json()["guild"]
        assert got["name"] == "Renamed" and got["description"] == "new" and got["id"] == h.id
    await refused(client, h.outsider, out)


async def test_guild_delete_reaches_every_member(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    r = await client.delete(f"{API}/guilds/{h.id}", headers=h.owner.headers)
    assert r.status_code == 204, r.text
    for conn in (owner, a, b):
        assert await conn.dispatch("GUILD_DELETE") == {"id": h.id, "reason": "deleted"}
    await refused(client, h.outsider, out)


async def test_leaving_tells_the_leaver_guild_delete_and_the_others_member_remove(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    laptop = await second_device(client, h.b)
    owner, a, b1, b2 = await online(gateway, client, h.owner, h.a, h.b, laptop)
    r = await client.delete(f"{API}/users/@me/guilds/{h.id}", headers=h.b.headers)
    assert r.status_code == 204, r.text
    for conn in (owner, a):
        got = await until(conn, "MESSAGE_CREATE")
        [removed] = of_type(got, "MEMBER_REMOVE")
        assert set(removed) == {"guild_id", "user"} and removed["guild_id"] == h.id
        assert set(removed["user"]) == SUMMARY_FIELDS and removed["user"]["id"] == h.b.id
        assert got[-1][1]["system_event"]["type"] == "member_leave"
    for got in await seen(client, h.b, b1, b2):
        assert got == [("GUILD_DELETE", {"id": h.id, "reason": "left"})]


async def test_kick_and_ban_tell_the_target_why_and_the_members_who(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    r = await client.delete(f"{API}/guilds/{h.id}/members/{h.b.id}", headers=h.owner.headers)
    assert r.status_code == 204, r.text
    r = await client.put(f"{API}/guilds/{h.id}/bans/{h.a.id}", json={"reason": "spam"}, headers=h.owner.headers)
    assert r.status_code == 204, r.text
    # A ban of a non-member removes no one: no event at all.
    r = await client.put(f"{API}/guilds/{h.id}/bans/{h.outsider.id}", json={}, headers=h.owner.headers)
    assert r.status_code == 204, r.text
    got = await until(owner, "MEMBER_REMOVE", lambda d: d["user"]["id"] == h.a.id)
    assert [d["user"]["id"] for d in of_type(got, "MEMBER_REMOVE")] == [h.b.id, h.a.id]
    got = await until(a, "GUILD_DELETE")
    assert [d["user"]["id"] for d in of_type(got, "MEMBER_REMOVE")] == [h.b.id]
    assert got[-1] == ("GUILD_DELETE", {"id": h.id, "reason": "banned"})
    (got,) = await seen(client, h.b, b)
    assert got == [("GUILD_DELETE", {"id": h.id, "reason": "kicked"})]
    (got,) = await seen(client, h.a, a)
    assert got == []  # nothing of the guild after the ban
    await refused(client, h.outsider, out)


async def test_removed_member_receives_no_guild_events_any_more(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    a, b = await online(gateway, client, h.a, h.b)
    assert (await client.delete(f"{API}/users/@me/guilds/{h.id}", headers=h.b.headers)).status_code == 204
    r = await client.patch(f"{API}/guilds/{h.id}", json={"name": "Without b"}, headers=h.owner.headers)
    assert r.status_code == 200, r.text
    await make_role(client, h.owner, h.id, "later")
    await room(client, h.owner, h.id, name="later")
    await add_member(rt, h.id, h.outsider)
    assert (await until(a, "MEMBER_ADD"))[-1][1]["user"]["id"] == h.outsider.id
    await refused(client, h.b, b, only=[t for t in GUILD_EVENTS if t != "GUILD_DELETE"])


# ---- CHANNEL_* -------------------------------------------------------------------------------------------------------

async def test_channel_create_reaches_only_those_who_may_view(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    crew = await make_role(client, h.owner, h.id, "crew")
    await give(client, h.owner, h.id, h.a, crew["id"])
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    public = await room(client, h.owner, h.id, name="public", topic="for all")
    secret = await secret_room(client, h, crew["id"])
    for conn in (owner, a):
        got = await until(conn, "CHANNEL_CREATE", lambda d: d["id"] == secret["id"])
        made = of_type(got, "CHANNEL_CREATE")
        # The event leaves before the room's system message is written: compare all but last_message_id.
        assert [{**c, "last_message_id": None} for c in made] == [{**c, "last_message_id": None}
                                                                    for c in (public, secret)]
        check_channel(made[1], secret["id"], h.id)
        assert {(o["id"], o["type"]) for o in made[1]["permission_overrides"]} == {(h.id, "role"),
                                                                                    (crew["id"], "role")}
    # b sees the public room (and its system message), never the secret one or its system message.
    got = await until(b, "MESSAGE_CREATE", lambda d: d["channel_id"] == public["id"])
    (more,) = await seen(client, h.b, b)
    assert [d["id"] for d in of_type(got + more, "CHANNEL_CREATE")] == [public["id"]]
    assert [d["channel_id"] for d in of_type(got + more, "MESSAGE_CREATE")] == [public["id"]]
    await refused(client, h.outsider, out)


async def test_channel_update_and_delete_reach_only_those_who_may_view(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    secret = await secret_room(client, h)
    owner, a, out = await online(gateway, client, h.owner, h.a, h.outsider)
    r = await client.patch(f"{API}/channels/{secret['id']}", json={"topic": "hush"}, headers=h.owner.headers)
    assert r.status_code == 200, r.text
    r = await client.delete(f"{API}/channels/{secret['id']}", headers=h.owner.headers)
    assert r.status_code == 204, r.text
    r = await client.patch(f"{API}/channels/{h.general}", json={"topic": "open"}, headers=h.owner.headers)
    assert r.status_code == 200, r.text
    got = [(t, d) for t, d in await until(owner, "CHANNEL_UPDATE", lambda d: d["id"] == h.general)
           if t in CHANNEL_EVENTS]
    assert channel_events(got) == [("CHANNEL_UPDATE", secret["id"]), ("CHANNEL_DELETE", secret["id"]),
                                   ("CHANNEL_UPDATE", h.general)]
    updated, deleted = got[0][1], got[1][1]
    check_channel(updated, secret["id"], h.id)
    assert updated["topic"] == "hush" and deleted["id"] == secret["id"]
    got = await until(a, "CHANNEL_UPDATE", lambda d: d["id"] == h.general)
    assert channel_events(got) == [("CHANNEL_UPDATE", h.general)] and got[-1][1]["topic"] == "open"
    await refused(client, h.outsider, out)


async def test_override_change_sends_create_update_or_delete_by_receiver(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    secret = await secret_room(client, h)
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    # b gets the secret room: CHANNEL_CREATE to b, CHANNEL_UPDATE to those who already viewed it.
    await override(client, h.owner, secret["id"], h.b.id, "member", allow="VIEW_CHANNEL")
    # b loses general: CHANNEL_DELETE to b, CHANNEL_UPDATE to the other viewers.
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    got = await until(owner, "CHANNEL_UPDATE", lambda d: d["id"] == h.general)
    assert channel_events(got) == [("CHANNEL_UPDATE", secret["id"]), ("CHANNEL_UPDATE", h.general)]
    check_channel(got[-1][1], h.general, h.id)
    assert got[-1][1]["permission_overrides"] == [{"id": h.b.id, "type": "member", "allow": "",
                                                   "deny": "VIEW_CHANNEL"}]
    got = await until(a, "CHANNEL_UPDATE", lambda d: d["id"] == h.general)
    assert channel_events(got) == [("CHANNEL_UPDATE", h.general)]
    got = await until(b, "CHANNEL_DELETE")
    assert channel_events(got) == [("CHANNEL_CREATE", secret["id"]), ("CHANNEL_DELETE", h.general)]
    check_channel(got[0][1], secret["id"], h.id)
    await refused(client, h.outsider, out)


async def test_channel_reorder_updates_each_room_for_its_viewers(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    secret = await secret_room(client, h)
    owner, a = await online(gateway, client, h.owner, h.a)
    r = await client.patch(f"{API}/guilds/{h.id}/channels", headers=h.owner.headers,
                           json={"channels": [{"id": secret["id"], "position": 0}, {"id": h.general, "position": 1}]})
    assert r.status_code == 200, r.text
    got = await until(owner, "CHANNEL_UPDATE", lambda d: d["id"] == h.general)
    assert sorted(channel_events(got)) == sorted([("CHANNEL_UPDATE", secret["id"]), ("CHANNEL_UPDATE", h.general)])
    got = await until(a, "CHANNEL_UPDATE", lambda d: d["id"] == h.general)
    assert channel_events(got) == [("CHANNEL_UPDATE", h.general)] and got[-1][1]["position"] == 1
    await refused(client, h.a, a, only=CHANNEL_EVENTS)


async def test_category_deletion_reaches_viewers_and_orphans_update_for_theirs(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    category = await room(client, h.owner, h.id, name="cat", type="category")
    inner = await room(client, h.owner, h.id, name="inner", parent_id=category["id"],
                       permission_overrides=[{"id": h.b.id, "type": "member", "deny": "VIEW_CHANNEL"}])
    a, b = await online(gateway, client, h.a, h.b)
    r = await client.delete(f"{API}/channels/{category['id']}", headers=h.owner.headers)
    assert r.status_code == 204, r.text
    got = await until(a, "CHANNEL_UPDATE", lambda d: d["id"] == inner["id"])
    assert channel_events(got) == [("CHANNEL_DELETE", category["id"]), ("CHANNEL_UPDATE", inner["id"])]
    assert got[-1][1]["parent_id"] is None
    got = await until(b, "CHANNEL_DELETE")
    assert channel_events(got) == [("CHANNEL_DELETE", category["id"])]
    await refused(client, h.b, b, only=CHANNEL_EVENTS)


# ---- ROLE_* and MEMBER_UPDATE ----------------------------------------------------------------------------------------

async def test_role_create_update_reorder_delete_reach_every_member(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    first = await make_role(client, h.owner, h.id, "first")
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    second = await make_role(client, h.owner, h.id, "second", "SEND_MESSAGES", color=255)
    r = await client.patch(f"{API}/guilds/{h.id}/roles/{second['id']}", json={"name": "renamed"},
                           headers=h.owner.headers)
    assert r.status_code == 200, r.text
    r = await client.patch(f"{API}/guilds/{h.id}/roles", json={"roles": [{"id": second["id"], "position": 2}]},
                           headers=h.owner.headers)
    assert r.status_code == 200, r.text
    r = await client.delete(f"{API}/guilds/{h.id}/roles/{first['id']}", headers=h.owner.headers)
    assert r.status_code == 204, r.text
    for conn in (owner, a, b):
        got = [(t, d) for t, d in await until(conn, "ROLE_DELETE") if t.startswith("ROLE_")]
        assert types(got) == ["ROLE_CREATE", "ROLE_UPDATE", "ROLE_UPDATE", "ROLE_UPDATE", "ROLE_UPDATE",
                              "ROLE_DELETE"]
        created = got[0][1]
        check_role(created, h.id)
        assert created == second and created["position"] == 1 and created["permissions"] == "SEND_MESSAGES"
        assert got[1][1]["id"] == first["id"] and got[1][1]["position"] == 2  # shifted up by the new role
        assert got[2][1]["name"] == "renamed"
        assert {(d["id"], d["position"]) for _, d in got[3:5]} == {(second["id"], 2), (first["id"], 1)}
        assert got[5][1] == {"guild_id": h.id, "role_id": first["id"]}
    await refused(client, h.outsider, out)


async def test_role_assignment_updates_members_and_gives_the_holder_its_rooms(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    crew = await make_role(client, h.owner, h.id, "crew")
    secret = await secret_room(client, h, crew["id"])
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    await give(client, h.owner, h.id, h.b, crew["id"])
    for conn in (owner, a, b):
        update = await conn.dispatch("MEMBER_UPDATE")
        check_member(update, h.id, h.b.id)
        assert update["roles"] == [crew["id"]]
    got = await until(b, "CHANNEL_CREATE")
    check_channel(got[-1][1], secret["id"], h.id)
    await refused(client, h.a, a, only=CHANNEL_EVENTS)
    await refused(client, h.owner, owner, only=CHANNEL_EVENTS)  # the owner viewed it already
    await refused(client, h.outsider, out)


async def test_role_permission_change_gives_and_takes_rooms_from_its_holders(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    r = await client.patch(f"{API}/guilds/{h.id}/roles/{h.id}", json={"permissions": "SEND_MESSAGES"},
                           headers=h.owner.headers)
    assert r.status_code == 200, r.text
    crew = await make_role(client, h.owner, h.id, "crew")
    await give(client, h.owner, h.id, h.b, crew["id"])
    a, b = await online(gateway, client, h.a, h.b)
    r = await client.patch(f"{API}/guilds/{h.id}/roles/{crew['id']}", json={"permissions": "VIEW_CHANNEL"},
                           headers=h.owner.headers)
    assert r.status_code == 200, r.text
    got = await until(b, "CHANNEL_CREATE")
    assert types(got) == ["ROLE_UPDATE", "CHANNEL_CREATE"]
    check_channel(got[-1][1], h.general, h.id)
    r = await client.patch(f"{API}/guilds/{h.id}/roles/{crew['id']}", json={"permissions": ""},
                           headers=h.owner.headers)
    assert r.status_code == 200, r.text
    got = await until(b, "CHANNEL_DELETE")
    assert types(got) == ["ROLE_UPDATE", "CHANNEL_DELETE"]
    (got,) = await seen(client, h.a, a)
    assert types(got) == ["ROLE_UPDATE", "ROLE_UPDATE"]  # a holds no crew role: no room changes


async def test_role_deletion_takes_its_rooms_from_the_holders(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    crew = await make_role(client, h.owner, h.id, "crew")
    await give(client, h.owner, h.id, h.b, crew["id"])
    secret = await secret_room(client, h, crew["id"])
    owner, a, b = await online(gateway, client, h.owner, h.a, h.b)
    r = await client.delete(f"{API}/guilds/{h.id}/roles/{crew['id']}", headers=h.owner.headers)
    assert r.status_code == 204, r.text
    got = await until(b, "CHANNEL_DELETE")
    assert types(got) == ["ROLE_DELETE", "MEMBER_UPDATE", "CHANNEL_DELETE"]
    assert got[1][1]["roles"] == [] and got[2][1]["id"] == secret["id"]
    got = await until(owner, "CHANNEL_UPDATE")
    assert types(got) == ["ROLE_DELETE", "MEMBER_UPDATE", "CHANNEL_UPDATE"]
    assert got[2][1]["permission_overrides"] == [{"id": h.id, "type": "role", "allow": "", "deny": "VIEW_CHANNEL"}]
    (got,) = await seen(client, h.a, a)
    assert types(got) == ["ROLE_DELETE", "MEMBER_UPDATE"]


async def test_member_update_for_nick_and_timeout_reaches_every_member(gateway, client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    r = await client.patch(f"{API}/guilds/{h.id}/members/@me", json={"nick": "Al"}, headers=h.a.headers)
    assert r.status_code == 200, r.text
    until_ = clock.now() + timedelta(hours=1)
    for value in (iso(until_), None):
        r = await client.patch(f"{API}/guilds/{h.id}/members/{h.a.id}", json={"timeout_until": value},
                               headers=h.owner.headers)
        assert r.status_code == 200, r.text
    for conn in (owner, a, b):
        got = [await conn.dispatch("MEMBER_UPDATE") for _ in range(3)]
        for d in got:
            check_member(d, h.id, h.a.id)
        assert [(d["nick"], d["timeout_until"]) for d in got] == [("Al", None), ("Al", iso(until_)), ("Al", None)]
    await refused(client, h.outsider, out)


async def test_member_events_reach_all_devices_of_a_member(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    tablet = await second_device(client, h.b)
    b1, b2, b3 = await online(gateway, client, h.b, h.b, tablet)
    r = await client.patch(f"{API}/guilds/{h.id}/members/@me", json={"nick": "Al"}, headers=h.a.headers)
    assert r.status_code == 200, r.text
    for got in await seen(client, h.b, b1, b2, b3):
        assert [(t, d["nick"]) for t, d in got] == [("MEMBER_UPDATE", "Al")]


# ---- owner transfer and instance administrators ------------------------------------------------------------------------

async def test_owner_transfer_moves_the_owners_rooms(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    secret = await secret_room(client, h)
    owner, a, b = await online(gateway, client, h.owner, h.a, h.b)
    r = await client.patch(f"{API}/guilds/{h.id}", json={"owner_id": h.a.id}, headers=h.owner.headers)
    assert r.status_code == 200, r.text
    got = await until(a, "CHANNEL_CREATE")
    assert types(got) == ["GUILD_UPDATE", "CHANNEL_CREATE"] and got[0][1]["owner_id"] == h.a.id
    check_channel(got[1][1], secret["id"], h.id)
    got = await until(owner, "CHANNEL_DELETE")
    assert types(got) == ["GUILD_UPDATE", "CHANNEL_DELETE"] and got[1][1]["id"] == secret["id"]
    (got,) = await seen(client, h.b, b)
    assert types(got) == ["GUILD_UPDATE"]


async def test_instance_admin_outside_the_guild_receives_none_of_its_events(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    await make_admin(rt, h.outsider)
    admin, a = await online(gateway, client, h.outsider, h.a)
    # Even the administrator's own changes (made through the bypass) reach only the members.
    r = await client.patch(f"{API}/guilds/{h.id}", json={"name": "Admin was here"}, headers=h.outsider.headers)
    assert r.status_code == 200, r.text
    made = await room(client, h.outsider, h.id, name="by-admin")
    await make_role(client, h.outsider, h.id, "admin-role")
    r = await client.patch(f"{API}/guilds/{h.id}/members/{h.a.id}", json={"nick": "renamed"},
                           headers=h.outsider.headers)
    assert r.status_code == 200, r.text
    got = await until(a, "MEMBER_UPDATE")
    assert types(got) == ["GUILD_UPDATE", "CHANNEL_CREATE", "MESSAGE_CREATE", "ROLE_CREATE", "MEMBER_UPDATE"]
    assert got[1][1]["id"] == made["id"]
    await refused(client, h.outsider, admin)


async def test_instance_admin_joining_gets_every_room_in_its_snapshot_as_in_ready(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    secret = await secret_room(client, h)
    await make_admin(rt, h.outsider)
    invite = await make_invite(client, h.owner, h.general)
    (admin,) = await online(gateway, client, h.outsider)
    assert (await accept_invite(client, h.outsider, invite["code"])).status_code == 200
    snap = await admin.dispatch("GUILD_CREATE")
    assert {c["id"] for c in snap["channels"]} == {h.general, secret["id"]}
    ready = await (await gateway.connect()).identify(h.outsider["token"])
    [ready_guild] = [g for g in ready["guilds"] if g["id"] == h.id]
    assert {c["id"] for c in ready_guild["channels"]} == {c["id"] for c in snap["channels"]}
    assert all(is_id(c["id"]) for c in snap["channels"])

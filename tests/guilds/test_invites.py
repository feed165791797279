"""Invitations over HTTP (OpenAPI: createInvite, joinInvite): create, list, preview, join, delete; refusals, limits,
expiry, rate limits, events and audit entries."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert, select

from meadhall.core.clock import iso
from meadhall.db.schema import audit_log, guild_bans, guilds, invites, members
from tests.support.guilds import accept_invite, make_guild, make_invite
from tests.support.http import error_code

INVITE_KEYS = {"code", "url", "guild_id", "channel_id", "inviter", "max_age_seconds", "max_uses", "uses",
               "expires_at", "is_public", "background_file_id", "created_at"}
INVITE_GUILD_KEYS = {"id", "name", "icon_file_id", "description", "member_count", "is_member"}


async def make_room(client: Any, owner: Any, guild_id: str, type_: str, name: str = "room") -> dict[str, Any]:
    r = await client.post(f"/api/v1/guilds/{guild_id}/channels", json={"name": name, "type": type_},
                          headers=owner.headers)
    assert r.status_code == 201, r.text
    return r.json()["channel"]


async def deny_for_everyone(client: Any, owner: Any, guild_id: str, channel_id: str, deny: str) -> None:
    """A room override on the default role (its id is the guild id)."""
    r = await client.put(f"/api/v1/channels/{channel_id}/permissions/{guild_id}",
                         json={"type": "role", "deny": deny}, headers=owner.headers)
    assert r.status_code == 204, r.text


async def audit_entries(rt: Any, action: str) -> list[Any]:
    async with rt.engine.connect() as conn:
        stmt = select(audit_log).where(audit_log.c.action == action).order_by(audit_log.c.id)
        return list((await conn.execute(stmt)).mappings())


@pytest.fixture
async def invited_hall(client: Any, accounts: Any) -> dict[str, Any]:
    """alice owns a guild with one text room `general` (its system channel); bob is a member."""
    alice = await accounts.register("alice")
    bob = await accounts.register("bob")
    guild = await make_guild(client, alice, "Mead Hall")
    invite = await make_invite(client, alice, guild["system_channel_id"])
    assert (await accept_invite(client, bob, invite["code"])).status_code == 200
    return {"alice": alice, "bob": bob, "guild": guild, "room": guild["system_channel_id"]}


# ---- create ------------------------------------------------------------------------------------


async def test_create_answers_the_invite_object(client, accounts, clock):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Mead Hall")
    r = await client.post(f"/api/v1/channels/{guild['system_channel_id']}/invites", json={}, headers=alice.headers)
    assert r.status_code == 201, r.text
    assert set(r.json()) == {"invite"}
    invite = r.json()["invite"]
    assert set(invite) == INVITE_KEYS
    assert re.fullmatch(r"[a-z0-9]{8}", invite["code"])
    assert invite["url"] == f"http://localhost:8000/invite/{invite['code']}"
    assert invite["guild_id"] == guild["id"]
    assert invite["channel_id"] == guild["system_channel_id"]
    assert invite["inviter"]["id"] == alice.id
    assert invite["inviter"]["username"] == "alice"
    assert (invite["max_age_seconds"], invite["max_uses"], invite["uses"]) == (86400, 0, 0)
    assert invite["is_public"] is False
    assert invite["background_file_id"] is None
    assert invite["created_at"] == iso(clock.now())
    assert invite["expires_at"] == iso(clock.now() + timedelta(seconds=86400))


async def test_create_without_a_body_uses_the_defaults(client, accounts):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Mead Hall")
    r = await client.post(f"/api/v1/channels/{guild['system_channel_id']}/invites", headers=alice.headers)
    assert r.status_code == 201, r.text
    assert (r.json()["invite"]["max_age_seconds"], r.json()["invite"]["max_uses"]) == (86400, 0)


async def test_create_with_options(client, accounts, clock):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Mead Hall")
    forever = await make_invite(client, alice, guild["system_channel_id"], max_age_seconds=0, max_uses=100)
    assert (forever["max_age_seconds"], forever["max_uses"], forever["expires_at"]) == (0, 100, None)
    week = await make_invite(client, alice, guild["system_channel_id"], max_age_seconds=604800, max_uses=1)
    assert week["expires_at"] == iso(clock.now() + timedelta(days=7))
    assert forever["code"] != week["code"]


@pytest.mark.parametrize("settings_overrides", [{"PUBLIC_URL": "https://chat.example.com"}])
async def test_url_follows_the_public_url(client, accounts):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Mead Hall")
    invite = await make_invite(client, alice, guild["system_channel_id"])
    assert invite["url"] == f"https://chat.example.com/invite/{invite['code']}"


@pytest.mark.parametrize("body, field", [
    ({"max_age_seconds": 604801}, "max_age_seconds"),
    ({"max_age_seconds": -1}, "max_age_seconds"),
    ({"max_uses": 101}, "max_uses"),
    ({"max_uses": -1}, "max_uses"),
    ({"max_uses": "many"}, "max_uses"),
])
async def test_create_validates_the_body(client, accounts, body, field):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Mead Hall")
    r = await client.post(f"/api/v1/channels/{guild['system_channel_id']}/invites", json=body, headers=alice.headers)
    assert r.status_code == 422, r.text
    assert error_code(r) == "validation.failed"
    assert r.json()["error"]["details"][0]["field"] == field


async def test_create_in_a_voice_room_but_not_in_a_category(client, accounts):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Mead Hall")
    voice = await make_room(client, alice, guild["id"], "voice", "Voice")
    invite = await make_invite(client, alice, voice["id"])
    assert invite["channel_id"] == voice["id"]
    category = await make_room(client, alice, guild["id"], "category", "Area")
    r = await client.post(f"/api/v1/channels/{category['id']}/invites", json={}, headers=alice.headers)
    assert r.status_code == 422, r.text
    assert error_code(r) == "channel.wrong_type"


async def test_create_needs_create_invite_in_the_room(client, invited_hall):
    alice, bob, guild = invited_hall["alice"], invited_hall["bob"], invited_hall["guild"]
    other = await make_room(client, alice, guild["id"], "text", "other")
    await deny_for_everyone(client, alice, guild["id"], invited_hall["room"], "CREATE_INVITE")
    r = await client.post(f"/api/v1/channels/{invited_hall['room']}/invites", json={}, headers=bob.headers)
    assert r.status_code == 403, r.text
    assert error_code(r) == "perm.denied"
    assert r.json()["error"]["permission"] == "CREATE_INVITE"
    # The override only covers that room; the owner holds every permission.
    await make_invite(client, bob, other["id"])
    await make_invite(client, alice, invited_hall["room"])


async def test_create_in_an_unseen_or_unknown_room_is_404(client, accounts, invited_hall):
    alice, bob, guild = invited_hall["alice"], invited_hall["bob"], invited_hall["guild"]
    hidden = await make_room(client, alice, guild["id"], "text", "hidden")
    await deny_for_everyone(client, alice, guild["id"], hidden["id"], "VIEW_CHANNEL")
    carol = await accounts.register("carol")
    for who, room in [(bob, hidden["id"]), (carol, invited_hall["room"]), (alice, "1234567890123"), (alice, "nope")]:
        r = await client.post(f"/api/v1/channels/{room}/invites", json={}, headers=who.headers)
        assert r.status_code == 404, r.text
        assert error_code(r) == "channel.not_found"


async def test_create_needs_a_session(client, invited_hall):
    r = await client.post(f"/api/v1/channels/{invited_hall['room']}/invites", json={})
    assert r.status_code == 401
    assert error_code(r) == "auth.unauthorized"


async def test_at_most_1000_live_invites_per_guild(client, accounts, rt, clock):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Mead Hall")
    room = int(guild["system_channel_id"])
    now = clock.now()
    rows = [{"code": f"bulk{i:04d}", "guild_id": int(guild["id"]), "channel_id": room, "inviter_id": int(alice.id),
             "max_age_seconds": 60, "max_uses": 0, "uses": 0, "expires_at": now + timedelta(seconds=60),
             "is_public": False, "background_file_id": None, "created_at": now} for i in range(1000)]
    async with rt.engine.begin() as conn:
        await conn.execute(insert(invites), rows)
    r = await client.post(f"/api/v1/channels/{room}/invites", json={}, headers=alice.headers)
    assert r.status_code == 409, r.text
    assert error_code(r) == "invite.limit_reached"
    # Expired invitations no longer exist and do not count.
    clock.advance(61)
    invite = await make_invite(client, alice, str(room))
    r = await client.get(f"/api/v1/guilds/{guild['id']}/invites", headers=alice.headers)
    assert [i["code"] for i in r.json()["invites"]] == [invite["code"]]


async def test_create_and_delete_are_audited(client, rt, invited_hall):
    alice, guild = invited_hall["alice"], invited_hall["guild"]
    invite = await make_invite(client, alice, invited_hall["room"], max_uses=3)
    entry = (await audit_entries(rt, "invite.create"))[-1]
    assert entry["guild_id"] == int(guild["id"])
    assert entry["actor_id"] == int(alice.id)
    assert entry["target_type"] == "invite"
    assert entry["target_id"] is None
    assert entry["data"]["code"] == invite["code"]
    r = await client.delete(f"/api/v1/invites/{invite['code']}", headers=alice.headers)
    assert r.status_code == 204, r.text
    [entry] = await audit_entries(rt, "invite.delete")
    assert (entry["guild_id"], entry["actor_id"], entry["target_id"]) == (int(guild["id"]), int(alice.id), None)
    assert entry["data"] == {"code": invite["code"]}


# ---- list --------------------------------------------------------------------------------------


async def test_list_is_newest_first_for_manage_guild(client, accounts, clock, invited_hall):
    alice, bob, guild = invited_hall["alice"], invited_hall["bob"], invited_hall["guild"]
    r = await client.get(f"/api/v1/guilds/{guild['id']}/invites", headers=alice.headers)
    first = r.json()["invites"][0]["code"]
    clock.advance(1)
    second = await make_invite(client, bob, invited_hall["room"], max_age_seconds=0)
    clock.advance(1)
    third = await make_invite(client, alice, invited_hall["room"], max_uses=5)
    r = await client.get(f"/api/v1/guilds/{guild['id']}/invites", headers=alice.headers)
    assert r.status_code == 200, r.text
    assert set(r.json()) == {"invites"}
    listed = r.json()["invites"]
    assert [i["code"] for i in listed] == [third["code"], second["code"], first]
    assert all(set(i) == INVITE_KEYS for i in listed)
    assert listed[1]["inviter"]["id"] == bob.id
    assert listed[2]["uses"] == 1
    # Expired invitations are gone from the list.
    clock.advance(86400)
    r = await client.get(f"/api/v1/guilds/{guild['id']}/invites", headers=alice.headers)
    assert [i["code"] for i in r.json()["invites"]] == [second["code"]]


async def test_list_refusals(client, accounts, invited_hall):
    r = await client.get(f"/api/v1/guilds/{invited_hall['guild']['id']}/invites", headers=invited_hall["bob"].headers)
    assert r.status_code == 403, r.text
    assert error_code(r) == "perm.denied"
    assert r.json()["error"]["permission"] == "MANAGE_GUILD"
    carol = await accounts.register("carol")
    r = await client.get(f"/api/v1/guilds/{invited_hall['guild']['id']}/invites", headers=carol.headers)
    assert r.status_code == 404
    assert error_code(r) == "guild.not_found"


# ---- preview -----------------------------------------------------------------------------------


async def test_preview_works_without_a_session(client, accounts):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Mead Hall", description="Mead & songs")
    invite = await make_invite(client, alice, guild["system_channel_id"])
    r = await client.get(f"/api/v1/invites/{invite['code']}")
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"invite", "guild"}
    assert body["invite"] == invite
    assert set(body["guild"]) == INVITE_GUILD_KEYS
    assert body["guild"] == {"id": guild["id"], "name": "Mead Hall", "icon_file_id": None,
                             "description": "Mead & songs", "member_count": 1, "is_member": False}


async def test_preview_is_member_follows_the_session(client, accounts, invited_hall):
    invite = await make_invite(client, invited_hall["alice"], invited_hall["room"])
    carol = await accounts.register("carol")
    for who, expected in [(invited_hall["alice"], True), (invited_hall["bob"], True), (carol, False)]:
        r = await client.get(f"/api/v1/invites/{invite['code']}", headers=who.headers)
        assert r.status_code == 200, r.text
        assert r.json()["guild"]["is_member"] is expected
        assert r.json()["guild"]["member_count"] == 2
    # An unusable token is treated as no session on this public route.
    r = await client.get(f"/api/v1/invites/{invite['code']}", headers={"Authorization": "Bearer nonsense"})
    assert r.status_code == 200
    assert r.json()["guild"]["is_member"] is False


async def test_preview_of_unknown_codes_is_404(client, invited_hall):
    for code in ["zzzzzzzz", "NOT-A-CODE", "a" * 40]:
        r = await client.get(f"/api/v1/invites/{code}")
        assert r.status_code == 404, r.text
        assert error_code(r) == "invite.not_found"


async def test_expired_invite_no_longer_exists(client, accounts, clock, invited_hall):
    invite = await make_invite(client, invited_hall["alice"], invited_hall["room"], max_age_seconds=3600)
    clock.advance(3599)
    assert (await client.get(f"/api/v1/invites/{invite['code']}")).status_code == 200
    clock.advance(1)
    r = await client.get(f"/api/v1/invites/{invite['code']}")
    assert r.status_code == 404
    assert error_code(r) == "invite.not_found"
    carol = await accounts.register("carol")
    r = await accept_invite(client, carol, invite["code"])
    assert r.status_code == 404
    assert error_code(r) == "invite.not_found"
    r = await client.delete(f"/api/v1/invites/{invite['code']}", headers=invited_hall["alice"].headers)
    assert r.status_code == 404


async def test_used_up_invite_no_longer_exists(client, accounts, invited_hall):
    invite = await make_invite(client, invited_hall["alice"], invited_hall["room"], max_uses=2)
    carol, dave, erin = [await accounts.register(n) for n in ("carol", "dave", "erin")]
    assert (await accept_invite(client, carol, invite["code"])).status_code == 200
    r = await client.get(f"/api/v1/invites/{invite['code']}")
    assert r.json()["invite"]["uses"] == 1
    assert (await accept_invite(client, dave, invite["code"])).status_code == 200
    r = await client.get(f"/api/v1/invites/{invite['code']}")
    assert r.status_code == 404
    assert error_code(r) == "invite.not_found"
    r = await accept_invite(client, erin, invite["code"])
    assert r.status_code == 404
    assert error_code(r) == "invite.not_found"
    r = await client.get(f"/api/v1/guilds/{invited_hall['guild']['id']}/invites", headers=invited_hall["alice"].headers)
    assert invite["code"] not in [i["code"] for i in r.json()["invites"]]


# ---- join --------------------------------------------------------------------------------------


async def test_join_makes_a_member_with_events(client, accounts, capture_events):
    alice = await accounts.register("alice")
    bob = await accounts.register("bob", display_name="Bob the Brave")
    guild = await make_guild(client, alice, "Mead Hall")
    invite = await make_invite(client, alice, guild["system_channel_id"])
    await capture_events.settle()
    capture_events.clear()
    r = await accept_invite(client, bob, invite["code"])
    assert r.status_code == 200, r.text
    assert r.json() == {"guild_id": guild["id"]}
    await capture_events.settle()

    [member_add] = capture_events.of_type("MEMBER_ADD")
    assert set(member_add.users) == {int(alice.id), int(bob.id)}
    assert member_add.data["guild_id"] == guild["id"]
    assert member_add.data["user"]["id"] == bob.id

    [guild_create] = capture_events.of_type("GUILD_CREATE")
    assert guild_create.users == (int(bob.id),)
    snapshot = guild_create.data
    assert snapshot["id"] == guild["id"]
    assert snapshot["member_count"] == 2
    assert [c["id"] for c in snapshot["channels"]] == [guild["system_channel_id"]]
    assert guild["id"] in [role["id"] for role in snapshot["roles"]]
    assert snapshot["member"]["user"]["id"] == bob.id
    assert {"emojis", "sounds", "cosmetics", "voice_states"} <= set(snapshot)

    [message] = capture_events.of_type("MESSAGE_CREATE")
    assert set(message.users) == {int(alice.id), int(bob.id)}
    assert message.data["channel_id"] == guild["system_channel_id"]
    assert message.data["kind"] == "system"
    assert message.data["author"] is None
    assert message.data["content"] == "Bob the Brave joined the server."
    assert message.data["system_event"] == {"type": "member_join", "user_id": bob.id, "actor_id": None,
                                            "via": "invite"}

    r = await client.get(f"/api/v1/invites/{invite['code']}", headers=bob.headers)
    assert r.json()["invite"]["uses"] == 1
    assert (r.json()["guild"]["member_count"], r.json()["guild"]["is_member"]) == (2, True)
    r = await client.get("/api/v1/users/@me/guilds", headers=bob.headers)
    assert [g["id"] for g in r.json()["guilds"]] == [guild["id"]]


async def test_joining_again_has_no_effect(client, capture_events, invited_hall):
    alice, bob = invited_hall["alice"], invited_hall["bob"]
    invite = await make_invite(client, alice, invited_hall["room"], max_uses=1)
    await capture_events.settle()
    capture_events.clear()
    for who in (bob, alice):
        r = await accept_invite(client, who, invite["code"])
        assert r.status_code == 200, r.text
        assert r.json() == {"guild_id": invited_hall["guild"]["id"]}
    await capture_events.settle()
    assert list(capture_events) == []
    r = await client.get(f"/api/v1/invites/{invite['code']}")
    assert r.status_code == 200
    assert r.json()["invite"]["uses"] == 0
    assert r.json()["guild"]["member_count"] == 2


async def test_banned_user_cannot_join(client, accounts, rt, capture_events, invited_hall):
    carol = await accounts.register("carol")
    guild_id = int(invited_hall["guild"]["id"])
    async with rt.engine.begin() as conn:
        await conn.execute(insert(guild_bans).values(guild_id=guild_id, user_id=int(carol.id), reason="spam",
                                                     author_id=int(invited_hall["alice"].id),
                                                     created_at=datetime.now(UTC)))
    invite = await make_invite(client, invited_hall["alice"], invited_hall["room"])
    await capture_events.reset()
    r = await accept_invite(client, carol, invite["code"])
    assert r.status_code == 403, r.text
    assert error_code(r) == "guild.banned"
    await capture_events.settle()
    assert list(capture_events) == []
    r = await client.get(f"/api/v1/invites/{invite['code']}", headers=carol.headers)
    assert r.json()["invite"]["uses"] == 0
    assert r.json()["guild"]["is_member"] is False


async def test_join_refused_at_200_memberships(client, accounts, rt, clock):
    alice = await accounts.register("alice")
    bob = await accounts.register("bob")
    guild = await make_guild(client, alice, "Mead Hall")
    invite = await make_invite(client, alice, guild["system_channel_id"])
    now = clock.now()
    base = 9_000_000_000_000
    guild_rows = [{"id": base + i, "name": f"g{i}", "name_norm": f"g{i}", "description": None, "icon_file_id": None,
                   "banner_file_id": None, "splash_file_id": None, "owner_id": int(bob.id), "member_count": 1,
                   "system_channel_id": None, "public": False, "public_invite_code": None, "is_main": False,
                   "created_at": now} for i in range(200)]
    member_rows = [{"guild_id": base + i, "user_id": int(bob.id), "nick": None, "nick_norm": None, "joined_at": now,
                    "timeout_until": None} for i in range(200)]
    async with rt.engine.begin() as conn:
        await conn.execute(insert(guilds), guild_rows)
        await conn.execute(insert(members), member_rows)
    r = await accept_invite(client, bob, invite["code"])
    assert r.status_code == 409, r.text
    assert error_code(r) == "guild.limit_reached"
    r = await client.get(f"/api/v1/invites/{invite['code']}", headers=bob.headers)
    assert (r.json()["invite"]["uses"], r.json()["guild"]["is_member"]) == (0, False)


async def test_join_needs_a_session(client, invited_hall):
    invite = await make_invite(client, invited_hall["alice"], invited_hall["room"])
    r = await client.post(f"/api/v1/invites/{invite['code']}")
    assert r.status_code == 401
    assert error_code(r) == "auth.unauthorized"


async def test_join_unknown_code_is_404(client, invited_hall):
    r = await accept_invite(client, invited_hall["bob"], "00000000")
    assert r.status_code == 404
    assert error_code(r) == "invite.not_found"


async def test_a_member_who_left_can_rejoin(client, invited_hall):
    bob = invited_hall["bob"]
    invite = await make_invite(client, invited_hall["alice"], invited_hall["room"])
    r = await client.delete(f"/api/v1/users/@me/guilds/{invited_hall['guild']['id']}", headers=bob.headers)
    assert r.status_code == 204, r.text
    assert (await accept_invite(client, bob, invite["code"])).status_code == 200
    r = await client.get(f"/api/v1/invites/{invite['code']}", headers=bob.headers)
    assert (r.json()["invite"]["uses"], r.json()["guild"]["member_count"]) == (1, 2)


# ---- delete ------------------------------------------------------------------------------------


async def test_delete_by_creator_or_manage_guild(client, accounts, invited_hall):
    alice, bob = invited_hall["alice"], invited_hall["bob"]
    carol = await accounts.register("carol")
    bobs = await make_invite(client, bob, invited_hall["room"])
    alices = await make_invite(client, alice, invited_hall["room"])
    assert (await accept_invite(client, carol, bobs["code"])).status_code == 200
    # carol is a member without MANAGE_GUILD and did not create either invitation.
    r = await client.delete(f"/api/v1/invites/{bobs['code']}", headers=carol.headers)
    assert r.status_code == 403, r.text
    assert error_code(r) == "perm.denied"
    # The creator may delete their own, not someone else's.
    r = await client.delete(f"/api/v1/invites/{alices['code']}", headers=bob.headers)
    assert r.status_code == 403
    r = await client.delete(f"/api/v1/invites/{bobs['code']}", headers=bob.headers)
    assert r.status_code == 204, r.text
    assert (await client.get(f"/api/v1/invites/{bobs['code']}")).status_code == 404
    # MANAGE_GUILD deletes any.
    again = await make_invite(client, bob, invited_hall["room"])
    r = await client.delete(f"/api/v1/invites/{again['code']}", headers=alice.headers)
    assert r.status_code == 204, r.text
    r = await client.delete(f"/api/v1/invites/{again['code']}", headers=alice.headers)
    assert r.status_code == 404
    assert error_code(r) == "invite.not_found"


async def test_delete_by_an_outsider_is_refused(client, accounts, invited_hall):
    invite = await make_invite(client, invited_hall["alice"], invited_hall["room"])
    dave = await accounts.register("dave")
    r = await client.delete(f"/api/v1/invites/{invite['code']}", headers=dave.headers)
    assert r.status_code == 403, r.text
    assert error_code(r) == "perm.denied"
    r = await client.delete(f"/api/v1/invites/{invite['code']}")
    assert r.status_code == 401
    assert (await client.get(f"/api/v1/invites/{invite['code']}")).status_code == 200


# ---- rate limits -------------------------------------------------------------------------------


@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"invites.create": "2/60"}}])
async def test_create_is_rate_limited_per_user(client, accounts, clock):
    alice = await accounts.register("alice")
    bob = await accounts.register("bob")
    guild = await make_guild(client, alice, "Mead Hall")
    room = guild["system_channel_id"]
    second = await make_invite(client, alice, room)
    assert (await accept_invite(client, bob, second["code"])).status_code == 200
    await make_invite(client, alice, room)
    r = await client.post(f"/api/v1/channels/{room}/invites", json={}, headers=alice.headers)
    assert r.status_code == 429, r.text
    assert error_code(r) == "rate_limited"
    assert r.json()["error"]["bucket"] == "invites.create"
    assert "Retry-After" in r.headers
    # Each user has their own bucket, and it refills.
    await make_invite(client, bob, room)
    clock.advance(60)
    await make_invite(client, alice, room)


@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"invites.preview": "2/60"}}])
async def test_preview_is_rate_limited_per_address(client, accounts):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Mead Hall")
    invite = await make_invite(client, alice, guild["system_channel_id"])
    assert (await client.get(f"/api/v1/invites/{invite['code']}")).status_code == 200
    assert (await client.get(f"/api/v1/invites/{invite['code']}", headers=alice.headers)).status_code == 200
    # The key is the address: a session does not give a fresh bucket, unknown codes count too.
    r = await client.get("/api/v1/invites/zzzzzzzz", headers=alice.headers)
    assert r.status_code == 429, r.text
    assert r.json()["error"]["bucket"] == "invites.preview"
    assert r.headers["X-RateLimit-Bucket"] == "invites.preview"


@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"invites.join": "1/60"}}])
async def test_join_is_rate_limited_per_user(client, accounts):
    alice = await accounts.register("alice")
    bob = await accounts.register("bob")
    guild = await make_guild(client, alice, "Mead Hall")
    invite = await make_invite(client, alice, guild["system_channel_id"])
    assert (await accept_invite(client, bob, invite["code"])).status_code == 200
    r = await accept_invite(client, bob, invite["code"])
    assert r.status_code == 429, r.text
    assert r.json()["error"]["bucket"] == "invites.join"
    # Without a session the answer is 401 before any bucket is consulted (docs/reference/limits.md).
    r = await client.post(f"/api/v1/invites/{invite['code']}")
    assert r.status_code == 401


async def test_the_same_user_joining_twice_at_once_joins_once(client, accounts, rt):
    """Concurrent joins by one user: one membership, one use spent, no server error."""
    import asyncio

    owner, joiner = await accounts.register("owner9"), await accounts.register("joiner9")
    guild = await make_guild(client, owner)
    code = (await client.post(f"/api/v1/channels/{guild['system_channel_id']}/invites", json={},
                              headers=owner.headers)).json()["invite"]["code"]
    answers = await asyncio.gather(*(client.post(f"/api/v1/invites/{code}", headers=joiner.headers)
                                     for _ in range(4)))
    assert [a.status_code for a in answers] == [200] * 4, [a.text for a in answers]
    g = (await client.get(f"/api/v1/guilds/{guild['id']}", headers=owner.headers)).json()["guild"]
    assert g["member_count"] == 2
    invites = (await client.get(f"/api/v1/guilds/{guild['id']}/invites", headers=owner.headers)).json()["invites"]
    assert [i["uses"] for i in invites if i["code"] == code] == [1]

"""Public servers (OpenAPI: updateGuild, listPublicGuilds): the `public` flag creates and removes the permanent public
invitation, GET /guilds/public lists them, and joining through the public code says so."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select

from meadhall.db.schema import audit_log, guild_bans
from tests.support.guilds import make_guild
from tests.support.http import error_code

PUBLIC_GUILD_KEYS = {"id", "name", "icon_file_id", "description", "member_count", "is_member", "public_invite_code"}


async def set_public(client: Any, owner: Any, guild_id: str, public: bool) -> dict[str, Any]:
    r = await client.patch(f"/api/v1/guilds/{guild_id}", json={"public": public}, headers=owner.headers)
    assert r.status_code == 200, r.text
    return r.json()["guild"]


async def listing(client: Any, who: Any, **params: Any) -> dict[str, Any]:
    r = await client.get("/api/v1/guilds/public", params=params, headers=who.headers)
    assert r.status_code == 200, r.text
    return r.json()


async def test_setting_public_creates_the_permanent_invitation(client, accounts, rt):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Mead Hall")
    assert (guild["public"], guild["public_invite_code"]) == (False, None)
    updated = await set_public(client, alice, guild["id"], True)
    code = updated["public_invite_code"]
    assert updated["public"] is True
    assert re.fullmatch(r"[a-z0-9]{8}", code)
    r = await client.get(f"/api/v1/invites/{code}")
    assert r.status_code == 200, r.text
    invite = r.json()["invite"]
    assert invite["code"] == code
    assert invite["is_public"] is True
    assert (invite["max_age_seconds"], invite["max_uses"], invite["expires_at"]) == (0, 0, None)
    assert invite["channel_id"] == guild["system_channel_id"]
    assert invite["url"].endswith(f"/invite/{code}")
    r = await client.get(f"/api/v1/guilds/{guild['id']}/invites", headers=alice.headers)
    assert [i["code"] for i in r.json()["invites"]] == [code]
    r = await client.get(f"/api/v1/guilds/{guild['id']}", headers=alice.headers)
    assert r.json()["guild"]["public_invite_code"] == code
    # Setting it again changes nothing.
    again = await set_public(client, alice, guild["id"], True)
    assert again["public_invite_code"] == code
    async with rt.engine.connect() as conn:
        rows = list((await conn.execute(select(audit_log).where(audit_log.c.action == "guild.update"))).mappings())
    assert len(rows) == 1
    assert rows[0]["data"]["changes"]["public"] == [False, True]


async def test_public_invitation_never_expires(client, accounts, clock):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Mead Hall")
    code = (await set_public(client, alice, guild["id"], True))["public_invite_code"]
    clock.advance(days=8)
    r = await client.get(f"/api/v1/invites/{code}")
    assert r.status_code == 200, r.text


async def test_unsetting_public_deletes_the_invitation(client, accounts):
    alice = await accounts.register("alice")
    bob = await accounts.register("bob")
    guild = await make_guild(client, alice, "Mead Hall")
    code = (await set_public(client, alice, guild["id"], True))["public_invite_code"]
    updated = await set_public(client, alice, guild["id"], False)
    assert (updated["public"], updated["public_invite_code"]) == (False, None)
    r = await client.get(f"/api/v1/invites/{code}")
    assert r.status_code == 404
    assert error_code(r) == "invite.not_found"
    r = await client.post(f"/api/v1/invites/{code}", headers=bob.headers)
    assert r.status_code == 404
    assert (await listing(client, bob))["guilds"] == []
    # Public again: a fresh code.
    new_code = (await set_public(client, alice, guild["id"], True))["public_invite_code"]
    assert new_code != code
    assert (await client.get(f"/api/v1/invites/{new_code}")).status_code == 200


async def test_only_manage_guild_sets_public(client, accounts):
    alice = await accounts.register("alice")
    bob = await accounts.register("bob")
    guild = await make_guild(client, alice, "Mead Hall")
    code = (await set_public(client, alice, guild["id"], True))["public_invite_code"]
    assert (await client.post(f"/api/v1/invites/{code}", headers=bob.headers)).status_code == 200
    r = await client.patch(f"/api/v1/guilds/{guild['id']}", json={"public": False}, headers=bob.headers)
    assert r.status_code == 403, r.text
    assert error_code(r) == "perm.denied"
    assert (await client.get(f"/api/v1/invites/{code}")).status_code == 200


async def test_the_public_invitation_cannot_be_deleted_directly(client, accounts):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Mead Hall")
    code = (await set_public(client, alice, guild["id"], True))["public_invite_code"]
    r = await client.delete(f"/api/v1/invites/{code}", headers=alice.headers)
    assert r.status_code == 409, r.text
    assert error_code(r) == "invite.public"
    assert (await client.get(f"/api/v1/invites/{code}")).status_code == 200


async def test_joining_a_public_server(client, accounts, capture_events):
    alice = await accounts.register("alice")
    bob = await accounts.register("bob", display_name="Bob")
    guild = await make_guild(client, alice, "Mead Hall")
    code = (await set_public(client, alice, guild["id"], True))["public_invite_code"]
    await capture_events.settle()
    capture_events.clear()
    r = await client.post(f"/api/v1/invites/{code}", headers=bob.headers)
    assert r.status_code == 200, r.text
    assert r.json() == {"guild_id": guild["id"]}
    await capture_events.settle()
    [message] = capture_events.of_type("MESSAGE_CREATE")
    assert message.data["content"] == "Bob joined the public server."
    assert message.data["system_event"] == {"type": "member_join", "user_id": bob.id, "actor_id": None,
                                            "via": "public"}
    assert message.data["channel_id"] == guild["system_channel_id"]
    assert set(message.users) == {int(alice.id), int(bob.id)}
    [member_add] = capture_events.of_type("MEMBER_ADD")
    assert set(member_add.users) == {int(alice.id), int(bob.id)}
    [guild_create] = capture_events.of_type("GUILD_CREATE")
    assert guild_create.users == (int(bob.id),)
    assert guild_create.data["public"] is True
    r = await client.get(f"/api/v1/invites/{code}", headers=bob.headers)
    assert r.json()["invite"]["uses"] == 1
    assert r.json()["guild"]["is_member"] is True


async def test_guild_bans_apply_to_the_public_invitation(client, accounts, rt):
    alice = await accounts.register("alice")
    bob = await accounts.register("bob")
    guild = await make_guild(client, alice, "Mead Hall")
    code = (await set_public(client, alice, guild["id"], True))["public_invite_code"]
    async with rt.engine.begin() as conn:
        await conn.execute(insert(guild_bans).values(guild_id=int(guild["id"]), user_id=int(bob.id), reason=None,
                                                     author_id=int(alice.id), created_at=datetime.now(UTC)))
    r = await client.post(f"/api/v1/invites/{code}", headers=bob.headers)
    assert r.status_code == 403, r.text
    assert error_code(r) == "guild.banned"


async def test_listing_shows_public_servers(client, accounts):
    alice = await accounts.register("alice")
    bob = await accounts.register("bob")
    hall = await make_guild(client, alice, "Mead Hall", description="Songs")
    await make_guild(client, alice, "Private Hall")
    code = (await set_public(client, alice, hall["id"], True))["public_invite_code"]
    body = await listing(client, bob)
    assert set(body) == {"guilds", "has_more"}
    assert body["has_more"] is False
    [item] = body["guilds"]
    assert set(item) == PUBLIC_GUILD_KEYS
    assert item == {"id": hall["id"], "name": "Mead Hall", "icon_file_id": None, "description": "Songs",
                    "member_count": 1, "is_member": False, "public_invite_code": code}
    assert (await listing(client, alice))["guilds"][0]["is_member"] is True
    assert (await client.post(f"/api/v1/invites/{code}", headers=bob.headers)).status_code == 200
    [item] = (await listing(client, bob))["guilds"]
    assert (item["is_member"], item["member_count"]) == (True, 2)


async def test_listing_needs_a_session(client, accounts):
    r = await client.get("/api/v1/guilds/public")
    assert r.status_code == 401
    assert error_code(r) == "auth.unauthorized"


async def test_listing_search_is_a_case_insensitive_substring(client, accounts):
    alice = await accounts.register("alice")
    names = ["Mead Hall", "Ёлочный Зал", "Dragon's Den", "100%_real"]
    ids = {}
    for name in names:
        guild = await make_guild(client, alice, name)
        await set_public(client, alice, guild["id"], True)
        ids[name] = guild["id"]

    async def found(q: str) -> list[str]:
        return [g["name"] for g in (await listing(client, alice, q=q))["guilds"]]

    assert await found("HALL") == ["Mead Hall"]
    assert await found("ead h") == ["Mead Hall"]
    assert await found("ЁЛОЧ") == ["Ёлочный Зал"]
    assert await found("зал") == ["Ёлочный Зал"]
    assert await found("den") == ["Dragon's Den"]
    # LIKE wildcards are matched literally.
    assert await found("%") == ["100%_real"]
    assert await found("_") == ["100%_real"]
    assert await found("nothing") == []
    # Latin "a" does not match the Cyrillic "а" of "Зал".
    assert sorted(await found("a")) == sorted(["Mead Hall", "Dragon's Den", "100%_real"])


async def test_listing_follows_renames(client, accounts):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Old Name")
    await set_public(client, alice, guild["id"], True)
    r = await client.patch(f"/api/v1/guilds/{guild['id']}", json={"name": "Новое Имя"}, headers=alice.headers)
    assert r.status_code == 200, r.text
    assert [g["id"] for g in (await listing(client, alice, q="новое"))["guilds"]] == [guild["id"]]
    assert (await listing(client, alice, q="old"))["guilds"] == []


async def test_listing_pages_newest_first(client, accounts):
    alice = await accounts.register("alice")
    created = []
    for i in range(3):
        guild = await make_guild(client, alice, f"Hall {i}")
        await set_public(client, alice, guild["id"], True)
        created.append(guild["id"])
    first = await listing(client, alice, limit=2)
    assert [g["id"] for g in first["guilds"]] == [created[2], created[1]]
    assert first["has_more"] is True
    second = await listing(client, alice, limit=2, before=created[1])
    assert [g["id"] for g in second["guilds"]] == [created[0]]
    assert second["has_more"] is False
    r = await client.get("/api/v1/guilds/public", params={"limit": 0}, headers=alice.headers)
    assert r.status_code == 422


async def test_deleting_the_public_invitation_room_keeps_the_server_public(client, accounts):
    """The permanent invitation moves to another text room; with no text room left, `public` ends."""
    a = await accounts.register("owner1")
    guild = await make_guild(client, a)
    gid = guild["id"]
    other = (await client.post(f"/api/v1/guilds/{gid}/channels", json={"name": "other", "type": "text"},
                               headers=a.headers)).json()["channel"]
    code = (await client.patch(f"/api/v1/guilds/{gid}", json={"public": True}, headers=a.headers)).json()["guild"][
        "public_invite_code"]
    assert (await client.delete(f"/api/v1/channels/{guild['system_channel_id']}", headers=a.headers)).status_code == 204
    preview = await client.get(f"/api/v1/invites/{code}")
    assert preview.status_code == 200 and preview.json()["invite"]["channel_id"] == other["id"]
    assert (await client.delete(f"/api/v1/channels/{other['id']}", headers=a.headers)).status_code == 204
    g = (await client.get(f"/api/v1/guilds/{gid}", headers=a.headers)).json()["guild"]
    assert g["public"] is False and g["public_invite_code"] is None
    assert (await client.get(f"/api/v1/invites/{code}")).status_code == 404

"""Members: listing, reading, nicknames, timeouts, kicks (OpenAPI: listMembers, updateMember, kickMember; docs/reference/permissions.md)."""

from __future__ import annotations

from datetime import timedelta

from meadhall.core.clock import iso
from tests.support.factories import add_member, audit_rows, make_admin
from tests.support.guilds import give, make_guild, make_role, set_default_permissions, users_of
from tests.support.http import API, denied, error
from tests.support.personas import staffed_hall

MOD = "KICK_MEMBERS|MANAGE_NICKNAMES|MODERATE_MEMBERS|MANAGE_ROLES"


# ---- list and read -----------------------------------------------------------------------------


async def test_list_members_pages_by_user_id_with_roles(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    extra = [await accounts.register(f"zed{i}") for i in range(3)]
    for account in extra:
        await add_member(rt, h.id, account)
    r = await client.get(h.url("/members"), headers=h.member.headers)
    assert r.status_code == 200, r.text
    body = r.json()
    ids = [m["user"]["id"] for m in body["members"]]
    assert ids == sorted(ids, key=int) and len(ids) == 6 and body["has_more"] is False
    mod = next(m for m in body["members"] if m["user"]["id"] == h.mod.id)
    assert mod["roles"] == [h.roles["mod"]["id"]] and mod["guild_id"] == h.id
    assert mod["user"]["username"] == "moderator" and mod["nick"] is None and mod["timeout_until"] is None
    assert "style" in mod and mod["joined_at"].endswith("Z")

    first = await client.get(h.url("/members"), params={"limit": 4}, headers=h.member.headers)
    assert [m["user"]["id"] for m in first.json()["members"]] == ids[:4] and first.json()["has_more"] is True
    rest = await client.get(h.url("/members"), params={"limit": 4, "after": ids[3]}, headers=h.member.headers)
    assert [m["user"]["id"] for m in rest.json()["members"]] == ids[4:] and rest.json()["has_more"] is False


async def test_list_members_query_prefix_on_username_display_name_and_nick(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    r = await client.patch(h.url("/members/@me"), json={"nick": "Ёжик"}, headers=h.member.headers)
    assert r.status_code == 200, r.text
    r = await client.patch(f"{API}/users/@me", json={"display_name": "Brünhilde"}, headers=h.mod.headers)
    assert r.status_code == 200, r.text

    async def found(q: str) -> set[str]:
        r = await client.get(h.url("/members"), params={"q": q}, headers=h.owner.headers)
        assert r.status_code == 200, r.text
        return {m["user"]["username"] for m in r.json()["members"]}

    assert await found("ёЖ") == {"member"}  # nick, Cyrillic case-insensitive
    assert await found("BRÜN") == {"moderator"}  # display name
    assert await found("own") == {"owner"}  # username prefix
    assert await found("wner") == set()  # prefix only
    assert await found("%") == set()  # wildcards are literal


async def test_list_and_get_refusals(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    assert error(await client.get(h.url("/members"), headers=h.outsider.headers)) == (404, "guild.not_found")
    assert error(await client.get(h.url(f"/members/{h.member.id}"), headers=h.outsider.headers)) == (
        404, "guild.not_found")
    assert error(await client.get(h.url("/members"), params={"after": "x"}, headers=h.member.headers)) == (
        422, "validation.failed")
    assert error(await client.get(h.url("/members"), params={"limit": 101}, headers=h.member.headers)) == (
        422, "validation.failed")
    r = await client.get(h.url(f"/members/{h.outsider.id}"), headers=h.member.headers)
    assert error(r) == (404, "member.not_found")
    r = await client.get(h.url("/members/123"), headers=h.member.headers)
    assert error(r) == (404, "member.not_found")


async def test_get_member_and_me(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    r = await client.get(h.url(f"/members/{h.mod.id}"), headers=h.member.headers)
    assert r.status_code == 200, r.text
    assert r.json()["member"]["roles"] == [h.roles["mod"]["id"]]
    r = await client.get(h.url("/members/@me"), headers=h.member.headers)
    assert r.json()["member"]["user"]["id"] == h.member.id


async def test_instance_admin_lists_and_moderates_without_membership(client, accounts, rt, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    admin = await accounts.register("root")
    await make_admin(rt, admin)
    r = await client.get(h.url("/members"), headers=admin.headers)
    assert r.status_code == 200 and len(r.json()["members"]) == 3
    r = await client.patch(h.url(f"/members/{h.mod.id}"), json={"nick": "Tamed"}, headers=admin.headers)
    assert r.status_code == 200, r.text
    r = await client.put(h.url(f"/members/{h.member.id}/roles/{h.roles['top']['id']}"), headers=admin.headers)
    assert r.status_code == 204, r.text
    r = await client.delete(h.url(f"/members/{h.mod.id}"), headers=admin.headers)
    assert r.status_code == 204, r.text
    # The bypass never lets anyone act on the owner.
    denied(await client.delete(h.url(f"/members/{h.owner.id}"), headers=admin.headers), None)
    # Not being a member, they have no own membership to edit.
    r = await client.patch(h.url("/members/@me"), json={"nick": "x"}, headers=admin.headers)
    assert error(r) == (404, "member.not_found")
    kicks = await audit_rows(rt, h.id, "member.kick")
    assert [(k["actor_id"], k["target_id"]) for k in kicks] == [(int(admin.id), int(h.mod.id))]


# ---- nicknames ---------------------------------------------------------------------------------


async def test_own_nickname_set_and_clear(client, accounts, rt, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    await capture_events.reset()
    r = await client.patch(h.url("/members/@me"), json={"nick": "  Sigrid  "}, headers=h.member.headers)
    assert r.status_code == 200, r.text
    assert r.json()["member"]["nick"] == "Sigrid"
    await capture_events.settle()
    updates = capture_events.of_type("MEMBER_UPDATE")
    assert len(updates) == 1 and updates[0].data["nick"] == "Sigrid"
    assert set(updates[0].users) == h.ids(h.owner, h.mod, h.member)
    r = await client.patch(h.url("/members/@me"), json={"nick": None}, headers=h.member.headers)
    assert r.json()["member"]["nick"] is None
    # The own nickname is not an audited moderation act.
    assert await audit_rows(rt, h.id, "member.nick_update") == []
    # The same through the member's own id.
    r = await client.patch(h.url(f"/members/{h.member.id}"), json={"nick": "Again"}, headers=h.member.headers)
    assert r.status_code == 200 and r.json()["member"]["nick"] == "Again"


async def test_own_nickname_needs_change_nickname(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    await set_default_permissions(client, h.owner, h.id, "VIEW_CHANNEL|SEND_MESSAGES")
    denied(await client.patch(h.url("/members/@me"), json={"nick": "x"}, headers=h.member.headers),
           "CHANGE_NICKNAME")
    denied(await client.patch(h.url(f"/members/{h.member.id}"), json={"nick": "x"}, headers=h.member.headers),
           "CHANGE_NICKNAME")
    for bad in ("", "   ", "x" * 33, 5):
        r = await client.patch(h.url("/members/@me"), json={"nick": bad}, headers=h.owner.headers)
        assert error(r) == (422, "validation.failed"), bad
    assert error(await client.patch(h.url("/members/@me"), json={"nick": "x"}, headers=h.outsider.headers)) == (
        404, "guild.not_found")


async def test_nickname_of_others(client, accounts, rt, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    await capture_events.reset()
    r = await client.patch(h.url(f"/members/{h.member.id}"), json={"nick": "Renamed"}, headers=h.mod.headers)
    assert r.status_code == 200, r.text
    assert r.json()["member"]["nick"] == "Renamed"
    await capture_events.settle()
    assert users_of(capture_events, "MEMBER_UPDATE") == [h.ids(h.owner, h.mod, h.member)]
    [entry] = await audit_rows(rt, h.id, "member.nick_update")
    assert entry["actor_id"] == int(h.mod.id) and entry["target_id"] == int(h.member.id)
    assert entry["target_type"] == "user" and entry["data"]["changes"]["nick"] == [None, "Renamed"]

    denied(await client.patch(h.url(f"/members/{h.mod.id}"), json={"nick": "x"}, headers=h.member.headers),
           "MANAGE_NICKNAMES")
    denied(await client.patch(h.url(f"/members/{h.owner.id}"), json={"nick": "x"}, headers=h.mod.headers), None)
    peer = await accounts.register("peer")
    await add_member(rt, h.id, peer)
    await give(client, h.owner, h.id, peer, h.roles["mod"]["id"])
    denied(await client.patch(h.url(f"/members/{peer.id}"), json={"nick": "x"}, headers=h.mod.headers), None)
    await give(client, h.owner, h.id, peer, h.roles["top"]["id"])
    denied(await client.patch(h.url(f"/members/{peer.id}"), json={"nick": "x"}, headers=h.mod.headers), None)
    r = await client.patch(h.url(f"/members/{h.outsider.id}"), json={"nick": "x"}, headers=h.mod.headers)
    assert error(r) == (404, "member.not_found")
    # The owner outranks everyone.
    r = await client.patch(h.url(f"/members/{peer.id}"), json={"nick": "Peer"}, headers=h.owner.headers)
    assert r.status_code == 200


# ---- timeouts ----------------------------------------------------------------------------------


async def test_timeout_set_shown_expires_and_clears(client, accounts, rt, clock, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    await capture_events.reset()
    until = clock.now() + timedelta(hours=1)
    r = await client.patch(h.url(f"/members/{h.member.id}"), json={"timeout_until": iso(until)},
                           headers=h.mod.headers)
    assert r.status_code == 200, r.text
    assert r.json()["member"]["timeout_until"] == iso(until)
    await capture_events.settle()
    [update] = capture_events.of_type("MEMBER_UPDATE")
    assert update.data["timeout_until"] == iso(until) and set(update.users) == h.ids(h.owner, h.mod, h.member)
    [entry] = await audit_rows(rt, h.id, "member.timeout")
    assert entry["target_id"] == int(h.member.id) and entry["data"]["timeout_until"] == iso(until)

    r = await client.get(h.url(f"/members/{h.member.id}"), headers=h.owner.headers)
    assert r.json()["member"]["timeout_until"] == iso(until)
    clock.advance(hours=1, seconds=1)
    r = await client.get(h.url(f"/members/{h.member.id}"), headers=h.owner.headers)
    assert r.json()["member"]["timeout_until"] is None
    listed = await client.get(h.url("/members"), headers=h.owner.headers)
    assert all(m["timeout_until"] is None for m in listed.json()["members"])

    again = clock.now() + timedelta(days=28)
    r = await client.patch(h.url(f"/members/{h.member.id}"), json={"timeout_until": iso(again)},
                           headers=h.mod.headers)
    assert r.status_code == 200 and r.json()["member"]["timeout_until"] == iso(again)
    await capture_events.reset()
    r = await client.patch(h.url(f"/members/{h.member.id}"), json={"timeout_until": None}, headers=h.mod.headers)
    assert r.status_code == 200 and r.json()["member"]["timeout_until"] is None
    await capture_events.settle()
    assert [e.data["timeout_until"] for e in capture_events.of_type("MEMBER_UPDATE")] == [None]
    [cleared] = await audit_rows(rt, h.id, "member.timeout_clear")
    assert cleared["data"]["timeout_until"] is None and cleared["actor_id"] == int(h.mod.id)


async def test_timed_out_member_is_refused_manage_actions(client, accounts, rt, clock):
    h = await staffed_hall(client, accounts, rt, MOD)
    peer = await accounts.register("peer")
    await add_member(rt, h.id, peer)
    await give(client, h.owner, h.id, peer, h.roles["top"]["id"])
    until = iso(clock.now() + timedelta(minutes=10))
    r = await client.patch(h.url(f"/members/{h.mod.id}"), json={"timeout_until": until}, headers=peer.headers)
    assert r.status_code == 200, r.text
    r = await client.post(h.url("/roles"), json={"name": "new"}, headers=h.mod.headers)
    denied(r, "MANAGE_ROLES")
    assert r.json()["error"]["timeout_until"] == until
    denied(await client.delete(h.url(f"/members/{h.member.id}"), headers=h.mod.headers), "KICK_MEMBERS")
    # Reading still works.
    assert (await client.get(h.url("/members"), headers=h.mod.headers)).status_code == 200
    clock.advance(minutes=11)
    r = await client.post(h.url("/roles"), json={"name": "new"}, headers=h.mod.headers)
    assert r.status_code == 201, r.text


async def test_timeout_refusals(client, accounts, rt, clock):
    h = await staffed_hall(client, accounts, rt, MOD)
    soon = {"timeout_until": iso(clock.now() + timedelta(hours=1))}
    for bad in (clock.now() - timedelta(seconds=1), clock.now() + timedelta(days=28, seconds=1)):
        r = await client.patch(h.url(f"/members/{h.member.id}"), json={"timeout_until": iso(bad)},
                               headers=h.mod.headers)
        assert error(r) == (422, "validation.failed"), bad
    r = await client.patch(h.url(f"/members/{h.member.id}"), json={"timeout_until": "2030-01-01T00:00:00"},
                           headers=h.mod.headers)
    assert error(r) == (422, "validation.failed")  # no time zone
    denied(await client.patch(h.url(f"/members/{h.mod.id}"), json=soon, headers=h.member.headers),
           "MODERATE_MEMBERS")
    denied(await client.patch(h.url(f"/members/{h.mod.id}"), json=soon, headers=h.mod.headers), None)  # self
    denied(await client.patch(h.url(f"/members/{h.owner.id}"), json=soon, headers=h.mod.headers), None)
    # ADMINISTRATOR holders cannot be timed out, even by the owner.
    admins = await make_role(client, h.owner, h.id, "admins", "ADMINISTRATOR")
    await give(client, h.owner, h.id, h.member, admins["id"])
    denied(await client.patch(h.url(f"/members/{h.member.id}"), json=soon, headers=h.owner.headers), None)
    # Equal and higher rank.
    peer = await accounts.register("peer")
    await add_member(rt, h.id, peer)
    await give(client, h.owner, h.id, peer, h.roles["mod"]["id"])
    roles = {r["name"]: r for r in (await client.get(h.url("/roles"), headers=h.owner.headers)).json()["roles"]}
    assert roles["mod"]["position"] > roles["admins"]["position"]
    denied(await client.patch(h.url(f"/members/{peer.id}"), json=soon, headers=h.mod.headers), None)
    await give(client, h.owner, h.id, peer, h.roles["top"]["id"])
    denied(await client.patch(h.url(f"/members/{peer.id}"), json=soon, headers=h.mod.headers), None)
    assert await audit_rows(rt, h.id, "member.timeout") == []


# ---- kicks -------------------------------------------------------------------------------------


async def test_kick(client, accounts, rt, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    await capture_events.reset()
    r = await client.delete(h.url(f"/members/{h.member.id}"), headers=h.mod.headers)
    assert r.status_code == 204, r.text
    await capture_events.settle()
    [remove] = capture_events.of_type("MEMBER_REMOVE")
    assert set(remove.users) == h.ids(h.owner, h.mod) and remove.data["user"]["id"] == h.member.id
    [gone] = capture_events.of_type("GUILD_DELETE")
    assert set(gone.users) == h.ids(h.member) and gone.data == {"id": h.id, "reason": "kicked"}
    system = [e for e in capture_events.of_type("MESSAGE_CREATE") if e.data.get("system_event")]
    assert [e.data["system_event"]["type"] for e in system] == ["member_kick"]
    assert system[0].data["system_event"]["actor_id"] == h.mod.id
    [entry] = await audit_rows(rt, h.id, "member.kick")
    assert (entry["actor_id"], entry["target_type"], entry["target_id"]) == (int(h.mod.id), "user", int(h.member.id))
    assert error(await client.get(h.url(), headers=h.member.headers)) == (404, "guild.not_found")
    assert error(await client.get(h.url("/members"), headers=h.member.headers)) == (404, "guild.not_found")
    r = await client.get(h.url(), headers=h.owner.headers)
    assert r.json()["guild"]["member_count"] == 2
    assert error(await client.delete(h.url(f"/members/{h.member.id}"), headers=h.mod.headers)) == (
        404, "member.not_found")


async def test_kick_refusals(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    denied(await client.delete(h.url(f"/members/{h.mod.id}"), headers=h.member.headers), "KICK_MEMBERS")
    denied(await client.delete(h.url(f"/members/{h.mod.id}"), headers=h.mod.headers), None)  # self
    denied(await client.delete(h.url(f"/members/{h.owner.id}"), headers=h.mod.headers), None)
    peer = await accounts.register("peer")
    await add_member(rt, h.id, peer)
    await give(client, h.owner, h.id, peer, h.roles["mod"]["id"])
    denied(await client.delete(h.url(f"/members/{peer.id}"), headers=h.mod.headers), None)  # equal rank
    await give(client, h.owner, h.id, peer, h.roles["top"]["id"])
    denied(await client.delete(h.url(f"/members/{peer.id}"), headers=h.mod.headers), None)  # above
    assert error(await client.delete(h.url(f"/members/{h.member.id}"), headers=h.outsider.headers)) == (
        404, "guild.not_found")
    assert error(await client.delete(h.url("/members/1"), headers=h.mod.headers)) == (404, "member.not_found")
    # A lower-ranked holder of the same permission is fine, and the owner may kick anyone.
    r = await client.delete(h.url(f"/members/{peer.id}"), headers=h.owner.headers)
    assert r.status_code == 204
    assert await audit_rows(rt, h.id, "member.kick") != []


async def test_list_members_query_count_is_bounded(client, accounts, rt, assert_query_count):
    owner = await accounts.register("owner")
    guild = await make_guild(client, owner)
    role = await make_role(client, owner, guild["id"], "r")
    for i in range(12):
        account = await accounts.register(f"m{i}")
        await add_member(rt, guild["id"], account)
        await give(client, owner, guild["id"], account, role["id"])
    # One of them reads the page's guild styles (docs/customisation.md), whatever the page's size.
    with assert_query_count(10):
        r = await client.get(f"{API}/guilds/{guild['id']}/members", params={"limit": 100}, headers=owner.headers)
    assert r.status_code == 200 and len(r.json()["members"]) == 13


# ---- a profile change, announced in every guild -----------------------------------------------------


async def test_profile_change_announces_the_member_as_each_guild_shows_it(client, accounts, rt, clock,
                                                                          capture_events):
    """One MEMBER_UPDATE per guild of the user, each the member object that guild's API shows (nickname, every
    held role, joined_at, a running timeout), to exactly that guild's members."""
    h = await staffed_hall(client, accounts, rt, MOD)
    # The moderator holds two roles and a nickname here, and is timed out; alone with its owner in a second hall.
    await give(client, h.owner, h.id, h.mod, h.roles["helper"]["id"])
    r = await client.patch(h.url(f"/members/{h.mod.id}"), json={"nick": "Warden"}, headers=h.owner.headers)
    assert r.status_code == 200, r.text
    until = clock.now() + timedelta(hours=1)
    r = await client.patch(h.url(f"/members/{h.mod.id}"), json={"timeout_until": iso(until)}, headers=h.owner.headers)
    assert r.status_code == 200, r.text
    other = await make_guild(client, h.member, "Side Hall")
    await add_member(rt, other["id"], h.mod)
    await capture_events.reset()

    r = await client.patch(f"{API}/users/@me", json={"custom_status": "on watch"}, headers=h.mod.headers)
    assert r.status_code == 200, r.text
    await capture_events.settle()
    updates = {ev.data["guild_id"]: ev for ev in capture_events.of_type("MEMBER_UPDATE")}
    assert sorted(updates) == sorted([h.id, other["id"]])
    for guild_id, members in ((h.id, h.ids(h.owner, h.mod, h.member)), (other["id"], h.ids(h.member, h.mod))):
        shown = await client.get(f"{API}/guilds/{guild_id}/members/{h.mod.id}", headers=h.member.headers)
        assert updates[guild_id].data == shown.json()["member"]
        assert list(updates[guild_id].users) == sorted(members)
    main = updates[h.id].data
    assert main["nick"] == "Warden" and main["timeout_until"] == iso(until)
    assert main["roles"] == sorted([h.roles["mod"]["id"], h.roles["helper"]["id"]], key=int)
    assert main["user"]["custom_status"] == "on watch" and updates[other["id"]].data["roles"] == []
    assert updates[other["id"]].data["nick"] is None


async def test_every_profile_change_sees_the_guilds_as_they_are_now(client, accounts, rt, clock, capture_events):
    """The audiences of a profile change are kept per process under the guilds' permission versions
    (guilds/members/audiences.py): after a first change, a nickname, a role, a timeout, a new member, a kick
    and a guild left must each show in the next one, events and receivers alike."""
    h = await staffed_hall(client, accounts, rt, MOD)
    other = await make_guild(client, h.member, "Side Hall")
    await add_member(rt, other["id"], h.mod)
    newcomer = await accounts.register("newcomer")

    async def change(text: str) -> dict[str, object]:
        await capture_events.reset()
        r = await client.patch(f"{API}/users/@me", json={"custom_status": text}, headers=h.mod.headers)
        assert r.status_code == 200, r.text
        await capture_events.settle()
        updates = {ev.data["guild_id"]: ev for ev in capture_events.of_type("MEMBER_UPDATE")}
        for guild_id, ev in updates.items():  # each the member object its guild shows now
            shown = await client.get(f"{API}/guilds/{guild_id}/members/{h.mod.id}", headers=h.mod.headers)
            assert ev.data == shown.json()["member"]
        return updates

    async def owner_patch(path: str, body: dict[str, object]) -> None:
        r = await client.patch(h.url(path), json=body, headers=h.owner.headers)
        assert r.status_code == 200, r.text

    first = await change("one")
    assert list(first[h.id].users) == sorted(h.ids(h.owner, h.mod, h.member))
    assert list(first[other["id"]].users) == sorted(h.ids(h.member, h.mod))
    second = await change("two")  # nothing moved: the same events to the same receivers, but the new status
    assert {k: (v.data, v.users) for k, v in second.items()} == {
        k: ({**v.data, "user": {**v.data["user"], "custom_status": "two"}}, v.users) for k, v in first.items()}

    await owner_patch(f"/members/{h.mod.id}", {"nick": "Warden"})
    assert (await change("three"))[h.id].data["nick"] == "Warden"
    await give(client, h.owner, h.id, h.mod, h.roles["helper"]["id"])
    assert h.roles["helper"]["id"] in (await change("four"))[h.id].data["roles"]
    until = clock.now() + timedelta(hours=1)
    await owner_patch(f"/members/{h.mod.id}", {"timeout_until": iso(until)})
    assert (await change("five"))[h.id].data["timeout_until"] == iso(until)

    await add_member(rt, other["id"], newcomer)
    assert int(newcomer.id) in (await change("six"))[other["id"]].users
    r = await client.delete(f"{API}/guilds/{other['id']}/members/{newcomer.id}", headers=h.member.headers)
    assert r.status_code == 204, r.text
    assert int(newcomer.id) not in (await change("seven"))[other["id"]].users

    r = await client.delete(f"{API}/users/@me/guilds/{other['id']}", headers=h.mod.headers)
    assert r.status_code == 204, r.text
    assert sorted(await change("eight")) == [h.id]

"""Guild bans (OpenAPI: banUser, unbanUser, listBans, getBan)."""

from __future__ import annotations

from meadhall.guilds.moderation.service import is_banned
from tests.support.factories import add_member, audit_rows, make_admin
from tests.support.guilds import give
from tests.support.http import denied, error
from tests.support.personas import staffed_hall

MOD = "BAN_MEMBERS|KICK_MEMBERS"


async def test_ban_member(client, accounts, rt, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    await capture_events.reset()
    r = await client.put(h.url(f"/bans/{h.member.id}"), json={"reason": "spam"}, headers=h.mod.headers)
    assert r.status_code == 204, r.text
    await capture_events.settle()
    [remove] = capture_events.of_type("MEMBER_REMOVE")
    assert set(remove.users) == h.ids(h.owner, h.mod) and remove.data["user"]["id"] == h.member.id
    assert remove.data["guild_id"] == h.id
    [gone] = capture_events.of_type("GUILD_DELETE")
    assert set(gone.users) == h.ids(h.member) and gone.data == {"id": h.id, "reason": "banned"}
    system = [e for e in capture_events.of_type("MESSAGE_CREATE") if e.data.get("system_event")]
    assert [e.data["system_event"]["type"] for e in system] == ["member_ban"]
    assert int(h.member.id) not in system[0].users
    [entry] = await audit_rows(rt, h.id, "member.ban")
    assert (entry["actor_id"], entry["target_type"], entry["target_id"], entry["reason"]) == (
        int(h.mod.id), "user", int(h.member.id), "spam")

    # The banned user has lost the guild.
    assert error(await client.get(h.url(), headers=h.member.headers)) == (404, "guild.not_found")
    r = await client.get("/api/v1/users/@me/guilds", headers=h.member.headers)
    assert r.json()["guilds"] == []
    assert error(await client.get(h.url(f"/members/{h.member.id}"), headers=h.owner.headers)) == (
        404, "member.not_found")

    r = await client.get(h.url("/bans"), headers=h.mod.headers)
    assert r.status_code == 200, r.text
    [ban] = r.json()["bans"]
    assert ban["user"]["id"] == h.member.id and ban["user"]["username"] == "member"
    assert ban["author"]["id"] == h.mod.id and ban["reason"] == "spam" and ban["created_at"].endswith("Z")
    r = await client.get(h.url(f"/bans/{h.member.id}"), headers=h.mod.headers)
    assert r.status_code == 200 and r.json()["ban"] == ban
    async with rt.engine.connect() as conn:
        assert await is_banned(conn, int(h.id), int(h.member.id)) is True
        assert await is_banned(conn, int(h.id), int(h.mod.id)) is False


async def test_ban_non_member_repeat_updates_reason_and_unban(client, accounts, rt, clock, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    await capture_events.reset()
    r = await client.put(h.url(f"/bans/{h.outsider.id}"), headers=h.mod.headers)  # no body, no reason
    assert r.status_code == 204, r.text
    await capture_events.settle()
    assert capture_events.of_type("MEMBER_REMOVE") == [] and capture_events.of_type("GUILD_DELETE") == []
    r = await client.get(h.url(f"/bans/{h.outsider.id}"), headers=h.mod.headers)
    first = r.json()["ban"]
    assert first["reason"] is None and first["author"]["id"] == h.mod.id
    clock.advance(60)
    r = await client.put(h.url(f"/bans/{h.outsider.id}"), json={"reason": "ban evasion"}, headers=h.owner.headers)
    assert r.status_code == 204
    again = (await client.get(h.url(f"/bans/{h.outsider.id}"), headers=h.mod.headers)).json()["ban"]
    assert again["reason"] == "ban evasion" and again["author"]["id"] == h.owner.id
    assert again["created_at"] == first["created_at"]
    assert len((await client.get(h.url("/bans"), headers=h.mod.headers)).json()["bans"]) == 1
    assert [e["reason"] for e in await audit_rows(rt, h.id, "member.ban")] == [None, "ban evasion"]

    r = await client.delete(h.url(f"/bans/{h.outsider.id}"), headers=h.mod.headers)
    assert r.status_code == 204, r.text
    [entry] = await audit_rows(rt, h.id, "member.unban")
    assert (entry["actor_id"], entry["target_type"], entry["target_id"]) == (int(h.mod.id), "user",
                                                                            int(h.outsider.id))
    assert error(await client.delete(h.url(f"/bans/{h.outsider.id}"), headers=h.mod.headers)) == (
        404, "ban.not_found")
    assert error(await client.get(h.url(f"/bans/{h.outsider.id}"), headers=h.mod.headers)) == (
        404, "ban.not_found")
    assert (await client.get(h.url("/bans"), headers=h.mod.headers)).json()["bans"] == []
    # Unbanned means "not a member": they can be added again.
    await add_member(rt, h.id, h.outsider)
    assert (await client.get(h.url(), headers=h.outsider.headers)).status_code == 200


async def test_ban_list_newest_first(client, accounts, rt, clock):
    h = await staffed_hall(client, accounts, rt, MOD)
    others = [await accounts.register(f"x{i}") for i in range(3)]
    for i, account in enumerate(others):
        clock.advance(10)
        r = await client.put(h.url(f"/bans/{account.id}"), json={"reason": f"r{i}"}, headers=h.mod.headers)
        assert r.status_code == 204
    r = await client.get(h.url("/bans"), headers=h.owner.headers)
    assert [b["reason"] for b in r.json()["bans"]] == ["r2", "r1", "r0"]


async def test_ban_refusals(client, accounts, rt):
    h = await staffed_hall(client, accounts, rt, MOD)
    target = h.url(f"/bans/{h.mod.id}")
    for method in ("GET", "PUT", "DELETE"):
        denied(await client.request(method, target, headers=h.member.headers), "BAN_MEMBERS")
        assert error(await client.request(method, target, headers=h.outsider.headers)) == (404, "guild.not_found")
    denied(await client.get(h.url("/bans"), headers=h.member.headers), "BAN_MEMBERS")
    assert error(await client.get(h.url("/bans"), headers=h.outsider.headers)) == (404, "guild.not_found")
    denied(await client.put(h.url(f"/bans/{h.mod.id}"), headers=h.mod.headers), None)  # self
    denied(await client.put(h.url(f"/bans/{h.owner.id}"), headers=h.mod.headers), None)
    peer = await accounts.register("peer")
    await add_member(rt, h.id, peer)
    await give(client, h.owner, h.id, peer, h.roles["mod"]["id"])
    denied(await client.put(h.url(f"/bans/{peer.id}"), headers=h.mod.headers), None)  # equal rank
    await give(client, h.owner, h.id, peer, h.roles["top"]["id"])
    denied(await client.put(h.url(f"/bans/{peer.id}"), headers=h.mod.headers), None)  # above
    assert error(await client.put(h.url("/bans/12345"), headers=h.mod.headers)) == (404, "user.not_found")
    assert error(await client.put(h.url("/bans/nope"), headers=h.mod.headers)) == (404, "user.not_found")
    r = await client.put(h.url(f"/bans/{h.member.id}"), json={"reason": "x" * 513}, headers=h.mod.headers)
    assert error(r) == (422, "validation.failed")
    assert await audit_rows(rt, h.id, "member.ban") == []
    # The refused requests wrote nothing.
    assert (await client.get(h.url("/bans"), headers=h.mod.headers)).json()["bans"] == []


async def test_instance_admin_bans_without_membership(client, accounts, rt, capture_events):
    h = await staffed_hall(client, accounts, rt, MOD)
    admin = await accounts.register("root")
    await make_admin(rt, admin)
    r = await client.put(h.url(f"/bans/{h.mod.id}"), json={"reason": "audit"}, headers=admin.headers)
    assert r.status_code == 204, r.text
    r = await client.get(h.url("/bans"), headers=admin.headers)
    [ban] = r.json()["bans"]
    assert ban["author"]["id"] == admin.id and ban["user"]["id"] == h.mod.id
    denied(await client.put(h.url(f"/bans/{h.owner.id}"), headers=admin.headers), None)
    assert (await client.delete(h.url(f"/bans/{h.mod.id}"), headers=admin.headers)).status_code == 204

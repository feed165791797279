"""Soft deletion of an account by an instance administrator (docs/admin.md "Soft deletion"; OpenAPI:
deleteInstanceUser): each effect on its own, seen through the API where the API shows it and in the rows
where it does not, and every refusal leaving the account untouched."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, insert, select, update

from meadhall.db.schema import (
    audit_log,
    backup_codes,
    files,
    guilds,
    passkeys,
    push_subscriptions,
    relationships,
    user_styles,
    users,
)
from tests.support.accounts import enable_2fa, login
from tests.support.admin import admin_account, user_url
from tests.support.conversations import check_conversation, conversations_of, group, member_ids, open_dm
from tests.support.factories import add_member, message_count
from tests.support.files import png, stored, upload
from tests.support.guilds import make_guild
from tests.support.http import assert_error
from tests.support.messages import history, post
from tests.support.personas import PASSWORD, hall
from tests.support.social import befriend, block, relationships_of, request_friend

ME = "/users/@me"


async def delete_user(api: Any, admin: Any, target: Any, *, expect: int | None = 204) -> Any:
    """The response of `DELETE /instance/users/{id}` (its status asserted unless `expect` is None)."""
    return await api.request("DELETE", user_url(target.id), admin, expect=expect)


async def user_row(rt: Any, account: Any) -> Any:
    async with rt.read() as uow:
        return (await uow.conn.execute(select(users).where(users.c.id == int(account.id)))).mappings().first()


async def count(rt: Any, table: Any, **where: Any) -> int:
    async with rt.read() as uow:
        stmt = select(func.count()).select_from(table)
        for column, value in where.items():
            stmt = stmt.where(table.c[column] == value)
        return int((await uow.conn.execute(stmt)).scalar_one())


async def insert_rows(rt: Any, table: Any, rows: list[dict[str, Any]]) -> None:
    async with rt.engine.begin() as conn:
        await conn.execute(insert(table), rows)


# --- effects ---------------------------------------------------------------------------------------------

async def test_sessions_are_deleted_and_answer_401(api, client, accounts, rt, capture_events):
    admin = await admin_account(client, accounts, rt)
    target = await accounts.register("target")
    second = await login(client, "target", PASSWORD)
    assert second.status_code == 200
    other_token = second.json()["token"]
    client.cookies.clear()
    await capture_events.reset()

    assert (await delete_user(api, admin, target)).status_code == 204

    await api.get(ME, target, expect=401)
    r = await client.get(f"/api/v1{ME}", headers={"Authorization": f"Bearer {other_token}"})
    assert r.status_code == 401
    await capture_events.settle()
    invalidated = capture_events.of_type("SESSION_INVALIDATED")
    assert {e.data["session_id"] for e in invalidated} == {target["session"]["id"], second.json()["session"]["id"]}
    assert all(e.data["reason"] == "admin_action" and e.users == (int(target.id),) for e in invalidated)
    assert await count(rt, users) >= 2  # the row itself stays


async def test_password_and_email_are_wiped_the_email_is_free_the_username_stays_taken(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt)
    target = await accounts.register("target")
    email = target["user"]["email"]
    before = await user_row(rt, target)

    await delete_user(api, admin, target)

    for login_value in ("target", email):
        assert_error(await login(client, login_value, PASSWORD), 401, "auth.invalid_credentials")
    after = await user_row(rt, target)
    assert after["password_hash"] != before["password_hash"] and after["password_hash"].startswith("$argon2")
    assert after["email_index"] != before["email_index"] and after["email_enc"] != before["email_enc"]
    assert after["deleted_at"] is not None and after["username"] == "target"
    # A new account registers with the address; the username is still taken.
    r = await client.post("/api/v1/auth/register", json={"username": "newcomer", "email": email, "password": PASSWORD})
    assert r.status_code == 201, r.text
    r = await client.post("/api/v1/auth/register",
                          json={"username": "TARGET", "email": "other@example.com", "password": PASSWORD})
    assert_error(r, 409, "user.username_taken")


async def test_second_factor_passkeys_push_subscriptions_and_styles_are_removed(api, client, accounts, rt, clock):
    admin = await admin_account(client, accounts, rt)
    target = await accounts.register("target")
    bystander = await accounts.register("bystander")
    await enable_2fa(client, target, clock)
    now = clock.now()
    for who, n in ((target, 1), (bystander, 2)):
        await insert_rows(rt, passkeys, [{
            "id": 900 + n, "user_id": int(who.id), "credential_id": f"cred-{n}", "public_key": b"k", "sign_count": 0,
            "transports": [], "backed_up": False, "name": "Key", "user_handle": f"h{n}", "created_at": now}])
        await insert_rows(rt, push_subscriptions, [{
            "id": 910 + n, "user_id": int(who.id), "session_id": int(who["session"]["id"]),
            "endpoint": f"https://push.example/{n}", "p256dh": "p",
            "auth": "a", "created_at": now, "failure_count": 0}])
        await insert_rows(rt, user_styles, [{"user_id": int(who.id), "scope_key": 0, "guild_id": None,
                                             "color": 0xFF0000, "updated_at": now}])
    assert await count(rt, backup_codes, user_id=int(target.id)) > 0

    await delete_user(api, admin, target)

    row = await user_row(rt, target)
    assert not row["totp_enabled"] and row["totp_secret_enc"] is None
    for table in (backup_codes, passkeys, push_subscriptions, user_styles):
        assert await count(rt, table, user_id=int(target.id)) == 0, table.name
    for table in (passkeys, push_subscriptions, user_styles):
        assert await count(rt, table, user_id=int(bystander.id)) == 1, table.name


async def test_the_avatar_file_is_removed(api, client, accounts, rt, settings):
    admin = await admin_account(client, accounts, rt)
    target = await accounts.register("target")
    r = await upload(client, target, f"{ME}/avatar", png())
    assert r.status_code == 200, r.text
    avatar = r.json()["user"]["avatar"]
    assert stored(settings, avatar).exists()

    await delete_user(api, admin, target)

    assert not stored(settings, avatar).exists()
    assert await count(rt, files, id=int(avatar)) == 0
    assert (await user_row(rt, target))["avatar_file_id"] is None


async def test_the_instance_ban_record_is_removed(api, client, accounts, rt, clock):
    admin = await admin_account(client, accounts, rt)
    target = await accounts.register("target")
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(target.id)).values(
            banned_at=clock.now(), ban_reason="spam", banned_by=int(admin.id)))

    await delete_user(api, admin, target)

    row = await user_row(rt, target)
    assert (row["banned_at"], row["ban_reason"], row["banned_by"]) == (None, None, None)
    assert row["deleted_at"] is not None


async def test_memberships_end_with_member_remove_and_no_system_message(api, client, accounts, rt, capture_events):
    admin = await admin_account(client, accounts, rt)
    h = await hall(client, accounts, rt)
    other = await make_guild(client, h.b, "Other")
    await add_member(rt, other["id"], h.a)
    messages_before = await message_count(rt, h.general)
    await capture_events.reset()

    await delete_user(api, admin, h.a)

    await capture_events.settle()
    removes = capture_events.of_type("MEMBER_REMOVE")
    assert {e.data["guild_id"] for e in removes} == {h.id, other["id"]}
    for e in removes:
        assert e.data["user"]["id"] == h.a.id and e.data["user"]["deleted"] is True
        assert int(h.a.id) not in e.users
    assert next(e for e in removes if e.data["guild_id"] == h.id).users == tuple(sorted((int(h.owner.id), int(h.b.id))))
    assert capture_events.of_type("GUILD_DELETE") == []
    assert capture_events.of_type("MESSAGE_CREATE") == []
    assert await message_count(rt, h.general) == messages_before
    listed = (await api.get(f"/guilds/{h.id}/members", h.owner))["members"]
    assert h.a.id not in {m["user"]["id"] for m in listed}
    async with rt.read() as uow:
        counts = dict((await uow.conn.execute(select(guilds.c.id, guilds.c.member_count))).all())
    assert counts[int(h.id)] == 2 and counts[int(other["id"])] == 1


async def test_a_group_of_three_becomes_one_to_one(api, client, accounts, rt, capture_events):
    admin = await admin_account(client, accounts, rt)
    alice, bob, target = [await accounts.register(n) for n in ("alice", "bob", "target")]
    conv = await group(api, target, alice, bob, name="Trio")
    await capture_events.reset()

    await delete_user(api, admin, target)

    await capture_events.settle()
    [gone] = capture_events.of_type("DM_CHANNEL_DELETE")
    assert gone.users == (int(target.id),) and gone.data["id"] == conv["id"]
    updates = capture_events.of_type("DM_CHANNEL_UPDATE")
    assert {e.users for e in updates} == {(int(alice.id),), (int(bob.id),)}
    assert all(not e.data["is_group"] and e.data["name"] is None for e in updates)
    [mine] = [c for c in await conversations_of(api, alice) if c["id"] == conv["id"]]
    check_conversation(mine, alice)
    assert member_ids(mine) == {alice.id, bob.id} and mine["counterpart"]["id"] == bob.id


async def test_a_larger_group_loses_the_user_and_ownership_passes(api, client, accounts, rt, capture_events):
    admin = await admin_account(client, accounts, rt)
    target, alice, bob, carol = [await accounts.register(n) for n in ("target", "alice", "bob", "carol")]
    conv = await group(api, target, alice, bob, carol, name="Four")
    await capture_events.reset()

    await delete_user(api, admin, target)

    [mine] = [c for c in await conversations_of(api, alice) if c["id"] == conv["id"]]
    assert mine["is_group"] and member_ids(mine) == {alice.id, bob.id, carol.id}
    assert mine["dm_owner_id"] == alice.id and mine["name"] == "Four"
    await capture_events.settle()
    assert [e.users for e in capture_events.of_type("DM_CHANNEL_DELETE")] == [(int(target.id),)]


async def test_one_to_one_stays_readable_and_refuses_sending(api, client, accounts, rt, capture_events):
    admin = await admin_account(client, accounts, rt)
    alice, target, carol = [await accounts.register(n) for n in ("alice", "target", "carol")]
    dm = await open_dm(api, alice, target)
    sent = await post(client, target, dm["id"], "last words")
    await post(client, alice, dm["id"], "hello")
    other = await open_dm(api, alice, carol)
    await capture_events.reset()

    await delete_user(api, admin, target)

    page = await history(client, alice, dm["id"])
    by_id = {m["id"]: m for m in page["messages"]}
    author = by_id[sent["id"]]["author"]
    assert author["deleted"] is True and author["id"] == target.id
    assert (author["username"], author["display_name"], author["avatar"]) == (
        f"deleted-{target.id}", "Deleted user", None)
    assert by_id[sent["id"]]["content"] == "last words"
    [mine] = [c for c in await conversations_of(api, alice) if c["id"] == dm["id"]]
    assert mine["counterpart"]["deleted"] is True
    r = await api.request("POST", f"/channels/{dm['id']}/messages", alice, json={"content": "anyone?"}, expect=None)
    assert_error(r, 403, "perm.denied")
    await post(client, alice, other["id"], "still fine")  # other conversations are untouched
    await capture_events.settle()
    assert capture_events.of_type("DM_CHANNEL_DELETE") == []
    profile = (await api.get(f"/users/{target.id}", alice))["user"]
    assert profile["deleted"] is True
    # Nor can the kept conversation become a group that would let people write to it again.
    r = await api.request("PUT", f"/channels/{dm['id']}/recipients/{carol.id}", alice, expect=None)
    assert_error(r, 403, "perm.denied")
    [still] = [c for c in await conversations_of(api, alice) if c["id"] == dm["id"]]
    assert still["is_group"] is False


async def test_relationships_are_removed_with_their_events(api, client, accounts, rt, capture_events):
    admin = await admin_account(client, accounts, rt)
    target, friend, asker, blocker, stranger = [
        await accounts.register(n) for n in ("target", "friend", "asker", "blocker", "stranger")]
    await befriend(api, target, friend)
    await request_friend(api, asker, target)
    await block(api, blocker, target)
    await befriend(api, friend, stranger)
    await capture_events.reset()

    await delete_user(api, admin, target)

    for who in (friend, asker, blocker):
        lists = await relationships_of(api, who)
        assert target.id not in {r["id"] for rs in lists.values() for r in rs}, who["user"]["username"]
    await capture_events.settle()
    removed = {(e.users, e.data["id"], e.data["type"]) for e in capture_events.of_type("RELATIONSHIP_REMOVE")}
    assert removed == {((int(friend.id),), target.id, "friend"), ((int(asker.id),), target.id, "outgoing"),
                       ((int(blocker.id),), target.id, "blocked")}
    assert await count(rt, relationships, user_id=int(friend.id)) == 1  # the friendship with the stranger stays


async def test_audit_entries_stay_and_the_deletion_is_audited(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt)
    h = await hall(client, accounts, rt)
    r = await client.post(f"/api/v1/channels/{h.general}/invites", json={}, headers=h.a.headers)
    assert r.status_code == 201, r.text
    async with rt.read() as uow:
        before = (await uow.conn.execute(select(audit_log.c.id).where(audit_log.c.actor_id == int(h.a.id)))).scalars().all()
    assert before

    await delete_user(api, admin, h.a)

    async with rt.read() as uow:
        still = (await uow.conn.execute(select(audit_log.c.id).where(audit_log.c.actor_id == int(h.a.id)))).scalars().all()
        entries = (await uow.conn.execute(select(audit_log).where(audit_log.c.action == "instance.user_delete"))
                   ).mappings().all()
    assert still == before
    [entry] = entries
    assert (entry["actor_id"], entry["target_type"], entry["target_id"], entry["guild_id"]) == (
        int(admin.id), "user", int(h.a.id), None)


# --- refusals --------------------------------------------------------------------------------------------

async def assert_untouched(api: Any, rt: Any, target: Any) -> None:
    await api.get(ME, target)
    assert (await user_row(rt, target))["deleted_at"] is None


async def test_a_non_administrator_is_refused(api, client, accounts, rt):
    plain = await accounts.register("plain")
    target = await accounts.register("target")
    assert_error(await delete_user(api, plain, target, expect=None), 403, "perm.denied")
    await assert_untouched(api, rt, target)


async def test_step_up_is_required(api, client, accounts, rt, clock):
    admin = await admin_account(client, accounts, rt)
    target = await accounts.register("target")
    clock.advance(601)
    assert_error(await delete_user(api, admin, target, expect=None), 403, "auth.step_up_required")
    await assert_untouched(api, rt, target)


async def test_neither_oneself_nor_another_administrator(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt)
    other_admin = await admin_account(client, accounts, rt, "otheradmin")
    assert_error(await delete_user(api, admin, admin, expect=None), 403, "perm.denied")
    assert_error(await delete_user(api, admin, other_admin, expect=None), 403, "perm.denied")
    await assert_untouched(api, rt, admin)
    await assert_untouched(api, rt, other_admin)


async def test_an_owner_of_servers_is_refused(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt)
    owner = await accounts.register("owner")
    await make_guild(client, owner)
    assert_error(await delete_user(api, admin, owner, expect=None), 409, "user.owns_guilds")
    await assert_untouched(api, rt, owner)


async def test_unknown_and_already_deleted_accounts_are_not_found(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt)
    target = await accounts.register("target")
    for raw in ("123456789012345678", "not-an-id"):
        r = await api.request("DELETE", f"/instance/users/{raw}", admin, expect=None)
        assert_error(r, 404, "user.not_found")
    await delete_user(api, admin, target)
    assert_error(await delete_user(api, admin, target, expect=None), 404, "user.not_found")
    async with rt.read() as uow:
        n = (await uow.conn.execute(select(func.count()).select_from(audit_log)
                                    .where(audit_log.c.action == "instance.user_delete"))).scalar_one()
    assert n == 1

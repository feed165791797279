"""The per-process permission cache (realtime/guild_state.py) never serves stale permissions: changes
made outside this process's services (raw SQL stands in for another node) take effect on the next
request, and what a rolled-back transaction read is never kept."""

from __future__ import annotations

import pytest
from sqlalchemy import insert, update

from meadhall.core import permissions as perms
from meadhall.db.schema import guilds, permission_overrides, roles, users
from meadhall.guilds.access import access_channel
from tests.support.factories import add_member
from tests.support.guilds import make_guild

API = "/api/v1"


async def sees(client, account, channel_id) -> bool:
    r = await client.get(f"{API}/channels/{channel_id}", headers=account.headers)
    assert r.status_code in (200, 404), r.text
    return r.status_code == 200


@pytest.fixture
async def cached_hall(client, accounts, rt):
    owner, member = await accounts.register("owner"), await accounts.register("member")
    guild = await make_guild(client, owner)
    await add_member(rt, guild["id"], member)
    room = guild["system_channel_id"]
    assert await sees(client, member, room)  # loads and caches the guild's permission state
    return owner, member, guild, room


async def test_override_written_elsewhere_applies_at_once(client, rt, cached_hall):
    owner, member, guild, room = cached_hall
    async with rt.engine.begin() as conn:
        await conn.execute(insert(permission_overrides).values(
            channel_id=int(room), target_id=int(guild["id"]), kind="role", allow=0, deny=int(perms.P.VIEW_CHANNEL)))
    assert not await sees(client, member, room)
    assert await sees(client, owner, room)


async def test_role_permissions_changed_elsewhere_apply_at_once(client, rt, cached_hall):
    owner, member, guild, room = cached_hall
    async with rt.engine.begin() as conn:
        await conn.execute(update(roles).where(roles.c.id == int(guild["id"])).values(permissions=0))
    assert not await sees(client, member, room)


async def test_owner_and_admin_flags_changed_elsewhere_apply_at_once(client, rt, cached_hall):
    owner, member, guild, room = cached_hall
    async with rt.engine.begin() as conn:
        await conn.execute(update(roles).where(roles.c.id == int(guild["id"])).values(permissions=0))
    assert not await sees(client, member, room)
    async with rt.engine.begin() as conn:
        await conn.execute(update(guilds).where(guilds.c.id == int(guild["id"])).values(owner_id=int(member.id)))
    assert await sees(client, member, room)  # the new owner holds everything
    assert not await sees(client, owner, room)
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(owner.id)).values(is_instance_admin=True))
    assert await sees(client, owner, room)


async def test_a_rolled_back_change_is_not_cached(client, rt, cached_hall):
    owner, member, guild, room = cached_hall

    class Abort(Exception):
        pass

    with pytest.raises(Abort):
        async with rt.uow() as uow:
            await uow.conn.execute(insert(permission_overrides).values(
                channel_id=int(room), target_id=int(guild["id"]), kind="role", allow=0,
                deny=int(perms.P.VIEW_CHANNEL)))
            from meadhall.auth.sessions import Principal

            who = Principal(int(member.id), 0, False, False, None)
            with pytest.raises(Exception):  # inside the transaction the deny is visible: 404
                await access_channel(uow.conn, who, room, uow.now)
            raise Abort
    assert await sees(client, member, room)
    # A real change committed afterwards is seen too (its version is not mistaken for the aborted one).
    async with rt.engine.begin() as conn:
        await conn.execute(update(roles).where(roles.c.id == int(guild["id"])).values(permissions=0))
    assert not await sees(client, member, room)


async def test_cached_room_access_costs_two_queries(client, rt, cached_hall, assert_query_count):
    owner, member, guild, room = cached_hall
    assert await sees(client, member, room)
    # The session comes from the session cache (at most the read of `auth_epoch`, which SQLite does on a
    # connection of its own); then the room with its guild, and no permission data.
    with assert_query_count(2) as statements:
        assert await sees(client, member, room)
    [room_query] = [s for s in statements if "auth_epoch" not in s]
    assert "FROM channels JOIN guilds" in room_query

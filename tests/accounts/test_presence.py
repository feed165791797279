"""Presence machinery (docs/gateway.md): activity is recorded hot in the store and flushed to the database at
most once a minute; the sweeper reports each user who crossed the 2-minute mark once; invisible users
are never reported; the effective status others see follows the same rules."""

from __future__ import annotations

from sqlalchemy import select, update

from meadhall.accounts import presence
from meadhall.db.schema import users

API = "/api/v1"


async def last_seen_column(rt, user_id: str):
    async with rt.read() as uow:
        return (await uow.conn.execute(select(users.c.last_seen_at).where(users.c.id == int(user_id)))).scalar_one()


async def test_touch_flushes_to_the_database_at_most_once_a_minute(rt, accounts, clock):
    alice = await accounts.register("alice")
    clock.advance(600)
    await presence.touch(rt, int(alice.id))
    first = await last_seen_column(rt, alice.id)
    clock.advance(30)
    await presence.touch(rt, int(alice.id))
    assert await last_seen_column(rt, alice.id) == first  # within the minute: only the hot value moved
    hot = await presence.last_seen(rt, int(alice.id), first)
    assert hot is not None and abs(hot.timestamp() - clock.now().timestamp()) < 0.01
    clock.advance(31)
    await presence.touch(rt, int(alice.id))
    assert await last_seen_column(rt, alice.id) != first


async def test_sweeper_reports_a_user_once_after_two_minutes(rt, accounts, clock):
    alice = await accounts.register("alice")
    clock.advance(600)
    await presence.touch(rt, int(alice.id))
    clock.advance(110)
    assert int(alice.id) not in await presence.sweep(rt)
    clock.advance(15)
    assert int(alice.id) in await presence.sweep(rt)
    clock.advance(30)
    assert int(alice.id) not in await presence.sweep(rt)  # reported once
    await presence.touch(rt, int(alice.id))  # active again, later idle again: reported again
    clock.advance(125)
    assert int(alice.id) in await presence.sweep(rt)


async def test_sweeper_uses_the_hot_value_not_the_lagging_column(rt, accounts, clock):
    alice = await accounts.register("alice")
    clock.advance(600)
    await presence.touch(rt, int(alice.id))  # column written now
    clock.advance(50)
    await presence.touch(rt, int(alice.id))  # hot value only
    clock.advance(100)  # column 150 s old, hot value 100 s old
    assert int(alice.id) not in await presence.sweep(rt)


async def test_invisible_users_are_never_reported(rt, accounts, clock):
    alice = await accounts.register("alice")
    async with rt.uow() as uow:
        await uow.conn.execute(update(users).where(users.c.id == int(alice.id)).values(status="invisible"))
    clock.advance(600)
    await presence.touch(rt, int(alice.id))
    clock.advance(125)
    assert int(alice.id) not in await presence.sweep(rt)


async def test_effective_status_seen_by_others(client, rt, accounts, clock):
    alice = await accounts.register("alice")
    bob = await accounts.register("bob")
    clock.advance(600)
    await presence.touch(rt, int(alice.id))
    r = await client.get(f"{API}/users/{alice.id}", headers=bob.headers)
    assert r.json()["user"]["status"] == "online"
    clock.advance(125)
    r = await client.get(f"{API}/users/{alice.id}", headers=bob.headers)
    assert r.json()["user"]["status"] == "offline"



async def test_online_in_a_client_is_an_open_connection_with_a_safety_expiry(rt, accounts, clock):
    """docs/push.md (the gateway's side is in tests/push/test_push_online.py): activity is not a connection; a
    connection counts until it closes, or until its safety expiry passes without a heartbeat renewing it."""
    alice = await accounts.register("alice")
    uid = int(alice.id)
    await presence.touch(rt, uid)  # REST activity is not a client connection
    await presence.touch(rt, uid, in_client=True)  # nor is a heartbeat's activity on its own
    assert not await presence.in_client(rt, uid)
    await presence.client_opened(rt, uid, "phone", 90)
    await presence.client_opened(rt, uid, "laptop", 90)
    await presence.client_closed(rt, uid, "phone")
    assert await presence.in_client(rt, uid)
    await presence.client_closed(rt, uid, "laptop")
    assert not await presence.in_client(rt, uid)  # at once

    await presence.client_opened(rt, uid, "phone", 90)
    clock.advance(80)
    await presence.client_refreshed(rt, uid, "phone", 90)
    clock.advance(80)
    assert await presence.in_client(rt, uid)
    clock.advance(11)
    assert not await presence.in_client(rt, uid)  # its node died: nothing closed it
    await presence.client_refreshed(rt, uid, "laptop", 90)  # a heartbeat never brings back a closed one
    assert not await presence.in_client(rt, uid)

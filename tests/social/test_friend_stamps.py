"""Friends kept under relationship stamps (social/relationships/friends.py, db/schema/social.py): every change of
a user's own relationship rows gives them a stamp never seen before, and the friends a process keeps are used
only while their stamp is current. Presence, which reads them, must follow every change at once; the two-node
test (tests/gateway/test_two_nodes.py) checks a change made on the other node."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from meadhall.db.schema import relationship_stamps
from meadhall.social.relationships import friends, queries
from tests.support.social import (
    befriend,
    block,
    remove_relationship,
    request_friend,
    set_relationship,
    set_status,
)


async def stamp_of(rt, account) -> int | None:
    async with rt.read() as uow:
        return (await uow.conn.execute(select(relationship_stamps.c.stamp)
                                       .where(relationship_stamps.c.user_id == int(account.id)))).scalar()


async def presence_receivers(api, capture_events, of) -> set[int]:
    """Who hears of a status change of `of` (PATCH, then the PRESENCE_UPDATEs on the bus)."""
    await capture_events.reset()
    await set_status(api, of, "dnd")
    await set_status(api, of, "online")
    await capture_events.settle()
    found = [set(e.users) for e in capture_events
             if e.type == "PRESENCE_UPDATE" and e.data["user"]["id"] == of.id]
    assert len(found) == 2 and found[0] == found[1]
    return found[0]


async def test_every_change_of_a_users_own_relationship_rows_gives_a_stamp_never_seen(api, accounts, rt):
    alice, bob, carol = [await accounts.register(n) for n in ("alice", "bob", "carol")]
    assert await stamp_of(rt, alice) is None  # no relationship yet: nothing may be kept
    seen: list[int | None] = []
    for step in (lambda: request_friend(api, alice, bob),       # alice's row: outgoing
                 lambda: set_relationship(api, bob, alice, "friend"),  # accepted: both rows change
                 lambda: block(api, alice, bob),                # alice's row: blocked (bob's goes)
                 lambda: remove_relationship(api, alice, bob),  # unblocked: alice's row goes
                 lambda: request_friend(api, carol, alice)):    # alice's row: incoming
        await step()
        seen.append(await stamp_of(rt, alice))
    assert None not in seen and len(set(seen)) == len(seen)

    # A change that writes none of alice's rows leaves hers alone.
    before = await stamp_of(rt, alice)
    await request_friend(api, bob, carol)
    assert await stamp_of(rt, alice) == before


async def test_the_receivers_of_presence_follow_every_relationship_change_at_once(api, accounts, capture_events):
    alice, bob, carol, dave = [await accounts.register(n) for n in ("alice", "bob", "carol", "dave")]
    await befriend(api, alice, bob)
    await befriend(api, alice, carol)
    # Each status change below first reads alice's friends under her current stamp, so every following one
    # would answer from what this process keeps unless the stamp moved.
    assert await presence_receivers(api, capture_events, alice) == {int(bob.id), int(carol.id)}
    assert await presence_receivers(api, capture_events, alice) == {int(bob.id), int(carol.id)}

    await block(api, carol, alice)  # carol's block ends the friendship: alice's row goes
    assert await presence_receivers(api, capture_events, alice) == {int(bob.id)}

    await befriend(api, dave, alice)
    assert await presence_receivers(api, capture_events, alice) == {int(bob.id), int(dave.id)}

    await remove_relationship(api, bob, alice)
    assert await presence_receivers(api, capture_events, alice) == {int(dave.id)}

    await block(api, alice, dave)
    await capture_events.reset()
    await set_status(api, alice, "idle")
    await capture_events.settle()
    assert [e for e in capture_events if e.type == "PRESENCE_UPDATE"] == []  # no friend left


class RolledBack(Exception):
    pass


async def test_friends_kept_by_a_transaction_that_rolled_back_are_never_used(api, accounts, rt):
    alice, bob, carol, mallory = [await accounts.register(n) for n in ("alice", "bob", "carol", "mallory")]
    await befriend(api, alice, bob)

    # A transaction makes mallory a friend, reads (and keeps) alice's friends under its own stamp, then fails.
    with pytest.raises(RolledBack):
        async with rt.uow() as uow:
            for me, other in ((alice, mallory), (mallory, alice)):
                await queries.insert_relationship_row(uow.conn, {"user_id": int(me.id), "other_id": int(other.id),
                                                                 "type": "friend", "since": uow.now})
            assert set(await friends.friend_ids_of(uow.conn, int(alice.id))) == {int(bob.id), int(mallory.id)}
            raise RolledBack

    # The next committed change of alice's rows gets a stamp of its own, never the one rolled back (a counter
    # would give the same number, and the kept list with mallory in it would be taken as current).
    await request_friend(api, alice, carol)
    async with rt.read() as uow:
        assert list(await friends.friend_ids_of(uow.conn, int(alice.id))) == [int(bob.id)]

"""RESUME (docs/gateway.md): replay of missed dispatches with their original numbers, then RESUMED; the
outcomes for an expired session, a sequence number from the future, and another user's token."""

from __future__ import annotations

import asyncio

from tests.support.guilds import make_guild
from tests.support.messages import post

RESUME_WINDOW = 120


async def owner_and_room(client, accounts):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice)
    return alice, guild["system_channel_id"]


async def disconnect(gateway, c) -> None:
    await c.close()
    await c.wait_closed()
    for _ in range(100):  # the server side notices the close
        gs = gateway.hub.sessions.get(c.session_id)
        if gs is None or gs.conn is None:
            return
        await asyncio.sleep(0.01)


async def resume(gateway, token: str, sid: str, seq: int):
    """A new connection that sends RESUME (after reading HELLO)."""
    c = await gateway.connect()
    assert (await c.recv())["op"] == 10
    await c.send(6, {"token": token, "session_id": sid, "seq": seq})
    return c


async def test_resume_replays_missed_dispatches_in_order_then_resumed(gateway, accounts, client):
    alice, room = await owner_and_room(client, accounts)
    c = await gateway.identified(alice["token"])
    await post(client, alice, room, "seen live")
    await c.dispatch("MESSAGE_CREATE")
    seq, sid = c.last_seq, c.session_id
    await disconnect(gateway, c)
    missed = [await post(client, alice, room, f"missed {i}") for i in range(3)]

    c2 = await resume(gateway, alice["token"], sid, seq)
    frames = [await c2.recv() for _ in range(4)]
    assert [f["s"] for f in frames] == [seq + 1, seq + 2, seq + 3, seq + 4]
    assert [f["d"]["id"] for f in frames[:3]] == [m["id"] for m in missed]
    assert frames[3]["t"] == "RESUMED" and frames[3]["d"] == {"replayed": 3}
    live = await post(client, alice, room, "after resume")
    frame = await c2.recv_until(lambda f: f["op"] == 0)
    assert frame["s"] == seq + 5 and frame["d"]["id"] == live["id"]


async def test_resume_from_an_older_seq_replays_from_there(gateway, accounts, client):
    alice, room = await owner_and_room(client, accounts)
    c = await gateway.identified(alice["token"])
    sent = [await post(client, alice, room, f"m{i}") for i in range(3)]
    for _ in sent:
        await c.dispatch("MESSAGE_CREATE")
    sid = c.session_id
    await disconnect(gateway, c)
    c2 = await gateway.connect()
    await c2.recv()
    await c2.send(6, {"token": alice["token"], "session_id": sid, "seq": 2})  # READY was 1
    frames = [await c2.recv() for _ in range(3)]
    assert [f["d"].get("id") for f in frames[:2]] == [m["id"] for m in sent[1:]]
    assert frames[2]["d"] == {"replayed": 2}


async def test_resume_takes_over_a_connection_the_server_still_holds(gateway, accounts, client):
    alice, room = await owner_and_room(client, accounts)
    c = await gateway.identified(alice["token"])
    c2 = await resume(gateway, alice["token"], c.session_id, c.last_seq)
    assert (await c2.dispatch("RESUMED")) == {"replayed": 0}
    assert await c.wait_closed() == 4000
    m = await post(client, alice, room)
    assert (await c2.dispatch("MESSAGE_CREATE"))["id"] == m["id"]


async def test_resume_after_the_window_is_expired_and_connection_stays_open(gateway, accounts, client, clock):
    alice, room = await owner_and_room(client, accounts)
    c = await gateway.identified(alice["token"])
    sid, seq = c.session_id, c.last_seq
    await disconnect(gateway, c)
    clock.advance(RESUME_WINDOW + 1)
    c2 = await resume(gateway, alice["token"], sid, seq)
    assert await c2.recv() == {"op": 9, "d": {"reason": "session_expired", "resumable": False}, "s": None, "t": None}
    await c2.send(2, {"token": alice["token"]})
    assert (await c2.dispatch("READY"))["session_id"] != sid


async def test_resume_within_the_window_still_works(gateway, accounts, client, clock):
    alice, room = await owner_and_room(client, accounts)
    c = await gateway.identified(alice["token"])
    sid, seq = c.session_id, c.last_seq
    await disconnect(gateway, c)
    clock.advance(RESUME_WINDOW - 5)
    c2 = await resume(gateway, alice["token"], sid, seq)
    assert await c2.dispatch("RESUMED") == {"replayed": 0}


async def test_resume_unknown_session_is_expired(gateway, accounts):
    alice = await accounts.register("alice")
    c = await gateway.connect()
    await c.recv()
    await c.send(6, {"token": alice["token"], "session_id": "0" * 32, "seq": 0})
    assert (await c.recv())["d"] == {"reason": "session_expired", "resumable": False}


async def test_resume_with_seq_beyond_the_last_closes_4007(gateway, accounts, client):
    alice, _room = await owner_and_room(client, accounts)
    c = await gateway.identified(alice["token"])
    sid, seq = c.session_id, c.last_seq
    await disconnect(gateway, c)
    c2 = await resume(gateway, alice["token"], sid, seq + 5)
    assert await c2.wait_closed() == 4007


async def test_resume_with_another_users_token_is_refused(gateway, accounts, client):
    alice, room = await owner_and_room(client, accounts)
    mallory = await accounts.register("mallory")
    c = await gateway.identified(alice["token"])
    sid, seq = c.session_id, c.last_seq
    await disconnect(gateway, c)
    c2 = await resume(gateway, mallory["token"], sid, seq)
    assert (await c2.recv())["d"] == {"reason": "unauthorized", "resumable": False}
    assert await c2.wait_closed() == 4004
    # Alice can still resume it, and got nothing of Mallory's.
    m = await post(client, alice, room, "for alice")
    c3 = await resume(gateway, alice["token"], sid, seq)
    assert (await c3.dispatch("MESSAGE_CREATE"))["id"] == m["id"]
    assert (await c3.dispatch("RESUMED")) == {"replayed": 1}


async def test_resume_with_invalid_token_is_refused(gateway, accounts, client):
    alice, _room = await owner_and_room(client, accounts)
    c = await gateway.identified(alice["token"])
    sid, seq = c.session_id, c.last_seq
    await disconnect(gateway, c)
    c2 = await resume(gateway, "bogus", sid, seq)
    assert (await c2.recv())["d"]["reason"] == "unauthorized"
    assert await c2.wait_closed() == 4004


async def test_resume_with_malformed_payload_closes_4002(gateway, accounts):
    alice = await accounts.register("alice")
    c = await gateway.connect()
    await c.recv()
    await c.send(6, {"token": alice["token"], "session_id": 5, "seq": "x"})
    assert await c.wait_closed() == 4002


async def test_events_before_ready_follow_it(gateway, accounts, client):
    """Sequence numbers start at READY = 1 and increase by one per dispatch."""
    alice, room = await owner_and_room(client, accounts)
    c = await gateway.identified(alice["token"])
    for i in range(5):
        await post(client, alice, room, f"n{i}")
    seqs = [(await c.recv_until(lambda f: f["op"] == 0))["s"] for _ in range(5)]
    assert seqs == [2, 3, 4, 5, 6]


async def test_resume_from_before_ready_is_expired(gateway, accounts, client):
    """READY is numbered but not kept for replay: a client that never got it identifies again."""
    alice, _room = await owner_and_room(client, accounts)
    c = await gateway.identified(alice["token"])
    sid = c.session_id
    await disconnect(gateway, c)
    c2 = await resume(gateway, alice["token"], sid, 0)
    assert (await c2.recv())["d"] == {"reason": "session_expired", "resumable": False}

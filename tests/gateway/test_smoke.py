from __future__ import annotations


async def test_identify_and_heartbeat(gateway, accounts):
    alice = await accounts.register("alice")
    c = await gateway.connect()
    ready = await c.identify(alice["token"])
    assert ready["user"]["id"] == alice.id
    await c.send(1, c.last_seq)
    ack = await c.recv()
    assert ack["op"] == 11

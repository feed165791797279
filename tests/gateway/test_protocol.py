"""The gateway protocol through a real WebSocket client (docs/gateway.md): HELLO, IDENTIFY by token or
handshake cookie, READY, heartbeats, the close codes and frame limits."""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy import update
from websockets.exceptions import InvalidStatus

from meadhall.db.schema import users
from tests.support.guilds import make_guild

API = "/api/v1"


async def test_hello_frame_layout(gateway):
    c = await gateway.connect()
    hello = await c.recv()
    assert hello == {"op": 10, "d": {"heartbeat_interval": 30000}, "s": None, "t": None}


async def test_identify_by_token_gives_ready_as_dispatch_one(gateway, accounts, client):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice, "Alice Hall")
    c = await gateway.connect()
    await c.recv()
    await c.send(2, {"token": alice["token"], "properties": {"os": "linux", "browser": "t", "device": "t"}})
    frame = await c.recv()
    assert frame["op"] == 0 and frame["t"] == "READY" and frame["s"] == 1
    ready = frame["d"]
    assert ready["v"] == 1
    assert isinstance(ready["session_id"], str) and ready["session_id"]
    assert ready["user"]["id"] == alice.id and ready["user"]["email"] == "alice@example.com"
    assert [g["id"] for g in ready["guilds"]] == [guild["id"]]
    snap = ready["guilds"][0]
    for key in ("roles", "channels", "emojis", "sounds", "cosmetics", "voice_states", "member"):
        assert key in snap
    assert snap["member"]["user"]["id"] == alice.id
    assert {c["name"] for c in snap["channels"]} >= {"general"}
    assert ready["dm_channels"] == [] and ready["presences"] == [] and ready["calls"] == []
    assert ready["relationships"] == {"friends": [], "incoming": [], "outgoing": [], "blocked": []}
    assert isinstance(ready["read_states"], list)


async def test_ready_carries_real_read_states(gateway, accounts, client):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice)
    room = guild["channels"][0]["id"] if guild.get("channels") else None
    if room is None:
        r = await client.get(f"{API}/guilds/{guild['id']}/channels", headers=alice.headers)
        room = next(ch["id"] for ch in r.json()["channels"] if ch["type"] == "text")
    r = await client.post(f"{API}/channels/{room}/messages", json={"content": "hi"}, headers=alice.headers)
    assert r.status_code in (200, 201), r.text
    message_id = r.json()["message"]["id"]
    r = await client.post(f"{API}/channels/{room}/ack", json={"message_id": message_id}, headers=alice.headers)
    assert r.status_code in (200, 204), r.text
    c = await gateway.connect()
    ready = await c.identify(alice["token"])
    states = {s["channel_id"]: s for s in ready["read_states"]}
    assert states[room]["last_read_message_id"] == message_id


async def test_identify_by_handshake_cookie(gateway, accounts):
    alice = await accounts.register("alice")
    cookie = f"__Host-session={alice['token']}"
    origin = gateway.app.state.runtime.settings.public_origin  # PUBLIC_URL's origin (with its port)
    c = await gateway.connect(additional_headers={"Cookie": cookie}, origin=origin)
    ready = await c.identify(None)
    assert ready["user"]["id"] == alice.id


async def test_cookie_handshake_from_a_foreign_origin_is_refused_with_403(gateway, accounts):
    alice = await accounts.register("alice")
    with pytest.raises(InvalidStatus) as err:
        await gateway.connect(additional_headers={"Cookie": f"__Host-session={alice['token']}"},
                              origin="https://evil.example")
    assert err.value.response.status_code == 403
    assert json.loads(err.value.response.body)["error"]["code"] == "auth.origin_mismatch"


async def test_foreign_origin_without_cookie_may_identify_by_token(gateway, accounts):
    alice = await accounts.register("alice")
    c = await gateway.connect(origin="https://app.example")
    ready = await c.identify(alice["token"])
    assert ready["user"]["id"] == alice.id


@pytest.mark.parametrize("d", [{}, {"token": "not-a-real-token"}, None])
async def test_identify_without_valid_token_is_refused(gateway, d):
    c = await gateway.connect()
    await c.recv()
    await c.send(2, d)
    frame = await c.recv()
    assert frame == {"op": 9, "d": {"reason": "unauthorized", "resumable": False}, "s": None, "t": None}
    assert await c.wait_closed() == 4004


async def test_identify_with_logged_out_token_is_refused(gateway, accounts, client):
    alice = await accounts.register("alice")
    r = await client.post(f"{API}/auth/logout", headers=alice.headers)
    assert r.status_code == 204
    c = await gateway.connect()
    await c.recv()
    await c.send(2, {"token": alice["token"]})
    assert (await c.recv())["d"]["reason"] == "unauthorized"
    assert await c.wait_closed() == 4004


async def test_banned_user_identify_is_refused_and_session_deleted(gateway, accounts, client, rt):
    alice = await accounts.register("alice")
    async with rt.uow() as uow:
        await uow.conn.execute(update(users).where(users.c.id == int(alice.id)).values(banned_at=uow.now))
    c = await gateway.connect()
    await c.recv()
    await c.send(2, {"token": alice["token"]})
    assert (await c.recv())["d"] == {"reason": "banned", "resumable": False}
    assert await c.wait_closed() == 4004
    async with rt.uow() as uow:
        await uow.conn.execute(update(users).where(users.c.id == int(alice.id)).values(banned_at=None))
    r = await client.get(f"{API}/users/@me", headers=alice.headers)
    assert r.status_code == 401  # the session was deleted


async def test_second_identify_closes_4005(gateway, accounts):
    alice = await accounts.register("alice")
    c = await gateway.identified(alice["token"])
    await c.send(2, {"token": alice["token"]})
    assert await c.wait_closed() == 4005


async def test_resume_on_identified_connection_closes_4005(gateway, accounts):
    alice = await accounts.register("alice")
    c = await gateway.identified(alice["token"])
    await c.send(6, {"token": alice["token"], "session_id": c.session_id, "seq": 1})
    assert await c.wait_closed() == 4005


@pytest.mark.parametrize("query", ["?v=2", "?v=1&encoding=etf", "?encoding=xml"])
async def test_bad_version_or_encoding_closes_4012(gateway, query):
    c = await gateway.connect("/gateway" + query)
    assert await c.wait_closed() == 4012


async def test_no_query_defaults_to_v1_json(gateway, accounts):
    alice = await accounts.register("alice")
    c = await gateway.connect("/gateway")
    assert (await c.identify(alice["token"]))["v"] == 1


async def test_binary_frame_closes_4002(gateway):
    c = await gateway.connect()
    await c.recv()
    await c.ws.send(b"\x00\x01")
    assert await c.wait_closed() == 4002


@pytest.mark.parametrize("raw", ["not json", "[1, 2]", '{"op": "1"}', '{"d": null}'])
async def test_undecodable_frame_closes_4002(gateway, raw):
    c = await gateway.connect()
    await c.recv()
    await c.ws.send(raw)
    assert await c.wait_closed() == 4002


@pytest.mark.parametrize("op", [0, 3, 7, 99])
async def test_unknown_opcode_closes_4001(gateway, accounts, op):
    alice = await accounts.register("alice")
    c = await gateway.identified(alice["token"])
    await c.send(op, None)
    assert await c.wait_closed() == 4001


async def test_frame_over_64_kib_closes_1009(gateway, accounts):
    alice = await accounts.register("alice")
    c = await gateway.identified(alice["token"])
    await c.ws.send(json.dumps({"op": 1, "d": None, "pad": "x" * (64 * 1024)}))
    assert await c.wait_closed() == 1009


async def test_frame_just_under_64_kib_is_accepted(gateway, accounts):
    alice = await accounts.register("alice")
    c = await gateway.identified(alice["token"])
    frame = json.dumps({"op": 1, "d": None, "pad": ""})
    await c.ws.send(json.dumps({"op": 1, "d": None, "pad": "x" * (64 * 1024 - len(frame))}))
    assert (await c.recv())["op"] == 11


async def test_frame_rate_over_120_per_minute_closes_4008(gateway, accounts):
    alice = await accounts.register("alice")
    c = await gateway.identified(alice["token"])
    for _ in range(119):
        await c.send(1, None)
    acks = [await c.recv() for _ in range(119)]  # IDENTIFY was the first frame of the window
    assert all(f["op"] == 11 for f in acks)
    await c.send(1, None)
    assert await c.wait_closed() == 4008


async def test_heartbeat_is_acknowledged_before_and_after_identify(gateway, accounts):
    alice = await accounts.register("alice")
    c = await gateway.connect()
    await c.recv()
    await c.send(1, None)
    assert await c.recv() == {"op": 11, "d": None, "s": None, "t": None}
    await c.send(2, {"token": alice["token"]})
    await c.dispatch("READY")
    await c.send(1, 1)
    assert (await c.recv())["op"] == 11


async def test_heartbeat_refreshes_last_seen(gateway, accounts, client, clock, rt):
    alice = await accounts.register("alice")
    c = await gateway.identified(alice["token"])
    clock.advance(300)
    await c.send(1, c.last_seq)
    assert (await c.recv())["op"] == 11
    await asyncio.sleep(0.05)
    async with rt.read() as uow:
        seen = (await uow.conn.execute(users.select().where(users.c.id == int(alice.id)))).mappings().one()
    assert abs(seen["last_seen_at"].replace(tzinfo=None).timestamp() - clock.now().replace(tzinfo=None).timestamp()) < 2


async def test_an_identified_connection_marks_the_user_online_in_a_client(gateway, accounts, rt):
    from meadhall.accounts import presence

    alice = await accounts.register("alice")
    assert not await presence.in_client(rt, int(alice.id))
    await gateway.identified(alice["token"])
    assert await presence.in_client(rt, int(alice.id))

"""Revoked sessions end their gateway connections (docs/reference/events.md SESSION_INVALIDATED, then close 4010),
exactly the affected ones; the revoked token can neither IDENTIFY nor RESUME afterwards."""

from __future__ import annotations

from typing import Any

from tests.support.guilds import make_guild
from tests.support.messages import post

API = "/api/v1"


async def new_session_headers(client: Any, account: Any) -> dict[str, str]:
    r = await client.post(f"{API}/auth/login", json={"login": account["user"]["username"],
                                                     "password": account["password"]})
    assert r.status_code == 200, r.text
    client.cookies.clear()
    token = r.json()["token"]
    return {"token": token, "Authorization": f"Bearer {token}"}


async def test_logout_ends_only_that_sessions_connections(gateway, accounts, client):
    alice = await accounts.register("alice")
    other = await new_session_headers(client, alice)
    phone1 = await gateway.identified(alice["token"])
    phone2 = await gateway.identified(alice["token"])  # same session, second connection
    laptop = await gateway.identified(other["token"])
    r = await client.post(f"{API}/auth/logout", headers=alice.headers)
    assert r.status_code == 204
    for c in (phone1, phone2):
        d = await c.dispatch("SESSION_INVALIDATED")
        assert d["reason"] == "logout" and isinstance(d["session_id"], str)
        assert await c.wait_closed() == 4010
    guild = await make_guild(client, as_session(alice, other))
    assert (await laptop.dispatch("GUILD_CREATE"))["id"] == guild["id"]
    assert laptop.closed_code is None


def as_session(account: Any, session: dict[str, str]) -> Any:
    """The account acting through another of its sessions."""

    class Other(dict):
        id = account.id
        headers = {"Authorization": session["Authorization"]}

    return Other(account)


async def test_logout_all_ends_every_connection(gateway, accounts, client):
    alice = await accounts.register("alice")
    other = await new_session_headers(client, alice)
    a = await gateway.identified(alice["token"])
    b = await gateway.identified(other["token"])
    r = await client.post(f"{API}/auth/logout-all", headers=alice.headers)
    assert r.status_code == 204
    for c in (a, b):
        assert (await c.dispatch("SESSION_INVALIDATED"))["reason"] == "logout_all"
        assert await c.wait_closed() == 4010


async def test_revoking_one_session_ends_its_connections(gateway, accounts, client):
    alice = await accounts.register("alice")
    other = await new_session_headers(client, alice)
    mine = await gateway.identified(alice["token"])
    theirs = await gateway.identified(other["token"])
    r = await client.get(f"{API}/auth/sessions", headers=alice.headers)
    current = next(s for s in r.json()["sessions"] if s.get("current"))
    victim = next(s for s in r.json()["sessions"] if s["id"] != current["id"])
    r = await client.delete(f"{API}/auth/sessions/{victim['id']}", headers=alice.headers)
    assert r.status_code == 204
    d = await theirs.dispatch("SESSION_INVALIDATED")
    assert d == {"reason": "revoked", "session_id": victim["id"]}
    assert await theirs.wait_closed() == 4010
    guild = await make_guild(client, alice)
    assert (await mine.dispatch("GUILD_CREATE"))["id"] == guild["id"]


async def test_password_change_ends_the_other_sessions(gateway, accounts, client):
    alice = await accounts.register("alice")
    other = await new_session_headers(client, alice)
    mine = await gateway.identified(alice["token"])
    theirs = await gateway.identified(other["token"])
    r = await client.post(f"{API}/auth/password", json={"new_password": "a brand new passphrase"},
                          headers=alice.headers)
    assert r.status_code == 204, r.text
    assert (await theirs.dispatch("SESSION_INVALIDATED"))["reason"] == "password_changed"
    assert await theirs.wait_closed() == 4010
    guild = await make_guild(client, alice)
    assert (await mine.dispatch("GUILD_CREATE"))["id"] == guild["id"]


async def test_a_revoked_gateway_session_cannot_be_resumed(gateway, accounts, client):
    alice = await accounts.register("alice")
    c = await gateway.identified(alice["token"])
    sid, seq = c.session_id, c.last_seq
    r = await client.post(f"{API}/auth/logout", headers=alice.headers)
    assert r.status_code == 204
    assert await c.wait_closed() == 4010
    c2 = await gateway.connect()
    await c2.recv()
    await c2.send(6, {"token": alice["token"], "session_id": sid, "seq": seq})
    assert (await c2.recv())["d"] == {"reason": "unauthorized", "resumable": False}
    assert await c2.wait_closed() == 4004
    assert sid not in gateway.hub.sessions


async def test_other_users_connections_are_untouched(gateway, accounts, client):
    alice = await accounts.register("alice")
    bob = await accounts.register("bob")
    guild = await make_guild(client, bob)
    b = await gateway.identified(bob["token"])
    await gateway.identified(alice["token"])
    r = await client.post(f"{API}/auth/logout-all", headers=alice.headers)
    assert r.status_code == 204
    m = await post(client, bob, guild["system_channel_id"], "still here")
    assert (await b.dispatch("MESSAGE_CREATE"))["id"] == m["id"]
    assert b.closed_code is None

"""For the delivery-matrix tests (who receives which dispatch, docs/gateway.md): accounts online on the
gateway, a deterministic negative check, and checks of each payload's fields.

The negative check never waits for silence: after the action under test, a marker event is produced
that the refused connection does receive (a USER_UPDATE of its own account, changing the private
`locale`), and everything that arrived before it is inspected. One bus and one hub lock deliver in
order, so an event that was going to reach the connection would have come first."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import Any

from tests.support.gateway import GatewayClient
from tests.support.http import API
from tests.support.shapes import (
    CHANNEL_FIELDS,
    MEMBER_FIELDS,
    MESSAGE_FIELDS,
    OVERRIDE_FIELDS,
    ROLE_FIELDS,
    SUMMARY_FIELDS,
    is_id,
)

Seen = list[tuple[str, dict[str, Any]]]


async def until(conn: GatewayClient, type_: str, pred: Callable[[dict[str, Any]], bool] | None = None) -> Seen:
    """The dispatches `(t, d)` received up to and including the first `type_` that matches `pred`."""
    out: Seen = []
    while True:
        frame = await conn.recv()
        if frame["op"] != 0:
            continue
        out.append((frame["t"], frame["d"]))
        if frame["t"] == type_ and (pred is None or pred(frame["d"])):
            return out


def types(seen: Seen) -> list[str]:
    return [t for t, _ in seen]


def of_type(seen: Seen, type_: str) -> list[dict[str, Any]]:
    return [d for t, d in seen if t == type_]


async def mark(client: Any, account: Any) -> str:
    """Produce a USER_UPDATE for `account` only, recognisable by its `locale` (a private field, so no other
    user hears of it)."""
    token = "en-" + uuid.uuid4().hex[:8]
    r = await client.patch(f"{API}/users/@me", json={"locale": token}, headers=account.headers)
    assert r.status_code == 200, r.text
    return token


async def until_mark(conn: GatewayClient, token: str) -> Seen:
    """What arrived before the marker (the marker itself left out)."""
    return (await until(conn, "USER_UPDATE", lambda d: d.get("locale") == token))[:-1]


async def seen(client: Any, account: Any, *conns: GatewayClient) -> list[Seen]:
    """For each connection of `account`: every dispatch up to now."""
    token = await mark(client, account)
    return [await until_mark(c, token) for c in conns]


async def refused(client: Any, account: Any, *conns: GatewayClient, only: Iterable[str] | None = None) -> Seen:
    """Assert that the connections of `account` got nothing (or nothing of the `only` types) so far."""
    forbidden = None if only is None else set(only)
    got: Seen = []
    for before in await seen(client, account, *conns):
        wrong = [(t, d) for t, d in before if forbidden is None or t in forbidden]
        assert not wrong, f"{account['user']['username']} must not receive: {wrong}"
        got += before
    return got


async def online(gateway: Any, client: Any, *accounts: Any) -> list[GatewayClient]:
    """One identified connection per account, past everything produced before (setup events)."""
    conns = [await gateway.identified(a["token"]) for a in accounts]
    # IDENTIFY sends READY before it marks the user present, and coming online is announced to the user's
    # friends: a heartbeat answered on each connection means that announcement was published, so the
    # markers below come after it (else a friend's "online" can arrive after the marker, as a new event).
    for conn in conns:
        await conn.send(1, conn.last_seq)
        await conn.recv_until(lambda f: f["op"] == 11)
    by_user: dict[str, tuple[Any, list[GatewayClient]]] = {}
    for account, conn in zip(accounts, conns, strict=True):
        # A USER_UPDATE reaches every connection of the user: one marker per user, not per session.
        by_user.setdefault(account.id, (account, []))[1].append(conn)
    for account, mine in by_user.values():
        await seen(client, account, *mine)
    return conns


async def second_device(client: Any, account: Any) -> Any:
    """A second session (another device) of the account, as an account-like object."""
    r = await client.post(f"{API}/auth/login", json={"login": account["user"]["username"],
                                                     "password": account["password"]})
    assert r.status_code == 200, r.text
    client.cookies.clear()
    data = r.json()
    return type(account)(token=data["token"], user=account["user"], password=account["password"],
                         session=data["session"])


def check_channel(d: dict[str, Any], channel_id: str, guild_id: str) -> None:
    assert set(d) == CHANNEL_FIELDS, set(d) ^ CHANNEL_FIELDS
    assert d["id"] == channel_id and d["guild_id"] == guild_id
    assert all(set(o) == OVERRIDE_FIELDS and is_id(o["id"]) for o in d["permission_overrides"])


def check_member(d: dict[str, Any], guild_id: str, user_id: str) -> None:
    assert set(d) == MEMBER_FIELDS, set(d) ^ MEMBER_FIELDS
    assert d["guild_id"] == guild_id and d["user"]["id"] == user_id
    assert set(d["user"]) == SUMMARY_FIELDS
    assert all(is_id(r) for r in d["roles"])


def check_role(d: dict[str, Any], guild_id: str) -> None:
    assert set(d) == ROLE_FIELDS, set(d) ^ ROLE_FIELDS
    assert is_id(d["id"]) and d["guild_id"] == guild_id and isinstance(d["permissions"], str)


def check_message(d: dict[str, Any], message: dict[str, Any] | None = None) -> None:
    assert set(d) == MESSAGE_FIELDS, set(d) ^ MESSAGE_FIELDS
    assert is_id(d["id"]) and is_id(d["channel_id"])
    if message is not None:
        assert d["id"] == message["id"] and d["channel_id"] == message["channel_id"]

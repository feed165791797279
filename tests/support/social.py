"""Relationships over HTTP (docs/social.md): friend requests, friendships and blocks between accounts, each
call asserting the status it expects (`expect=`), and the Relationship shape.

Other social helpers (conversations, calls) may add their own functions below."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import update

from meadhall.db.schema import users
from tests.support.shapes import SUMMARY_FIELDS, is_id

RELATIONSHIPS = "/users/@me/relationships"
RELATIONSHIP_FIELDS = {"id", "type", "user", "since", "style"}
LIST_NAMES = ("friends", "incoming", "outgoing", "blocked")


def relationship_url(other: Any) -> str:
    return f"{RELATIONSHIPS}/{other.id if hasattr(other, 'id') else other}"


async def request_friend(api: Any, a: Any, b: Any, *, expect: int = 201) -> Any:
    """`a` sends `b` a friend request by username (POST); the Relationship (or the error body)."""
    body = await api.post(RELATIONSHIPS, a, json={"username": b["user"]["username"]}, expect=expect)
    return body["relationship"] if expect == 201 else body


async def set_relationship(api: Any, a: Any, b: Any, type_: str, *, expect: int = 200) -> Any:
    """PUT `type_` (`friend` or `blocked`) on `a`'s relationship with `b`."""
    body = await api.put(relationship_url(b), a, json={"type": type_}, expect=expect)
    return body["relationship"] if expect == 200 else body


async def remove_relationship(api: Any, a: Any, b: Any, *, expect: int = 204) -> Any:
    return await api.delete(relationship_url(b), a, expect=expect)


async def befriend(api: Any, a: Any, b: Any) -> None:
    """Make `a` and `b` friends: `a` asks, `b` accepts."""
    await request_friend(api, a, b)
    accepted = await set_relationship(api, b, a, "friend")
    assert accepted["type"] == "friend"


async def block(api: Any, a: Any, b: Any) -> dict[str, Any]:
    """`a` blocks `b`."""
    blocked = await set_relationship(api, a, b, "blocked")
    assert blocked["type"] == "blocked"
    return blocked


async def relationships_of(api: Any, a: Any) -> dict[str, list[dict[str, Any]]]:
    return await api.get(RELATIONSHIPS, a)


async def types_of(api: Any, a: Any) -> dict[str, str]:
    """other user id -> the type `a` has with them, from GET (and each item checked for its list)."""
    lists = await relationships_of(api, a)
    assert set(lists) == set(LIST_NAMES)
    found: dict[str, str] = {}
    for name in LIST_NAMES:
        for item in lists[name]:
            check_relationship(item)
            assert {"friends": "friend"}.get(name, name) == item["type"]
            found[item["id"]] = item["type"]
    return found


def check_relationship(d: dict[str, Any], other: Any = None, type_: str | None = None) -> None:
    """The Relationship shape (docs/social.md); optionally its other user and type."""
    assert set(d) == RELATIONSHIP_FIELDS, set(d) ^ RELATIONSHIP_FIELDS
    assert is_id(d["id"]) and d["id"] == d["user"]["id"]
    assert set(d["user"]) == SUMMARY_FIELDS
    assert d["type"] in ("friend", "incoming", "outgoing", "blocked")
    assert d["style"] is None
    datetime.fromisoformat(d["since"].replace("Z", "+00:00"))
    if other is not None:
        assert d["id"] == other.id
    if type_ is not None:
        assert d["type"] == type_, d


async def soft_delete(rt: Any, account: Any) -> None:
    """Mark the account deleted as instance administration does (its row stays)."""
    async with rt.uow() as uow:
        await uow.conn.execute(update(users).where(users.c.id == int(account.id)).values(deleted_at=uow.now))


async def set_status(api: Any, account: Any, status: str) -> dict[str, Any]:
    """PATCH the chosen status; the private User."""
    return (await api.patch("/users/@me", account, json={"status": status}))["user"]

"""Calls in direct conversations, for the call tests: conversations opened through their routes, blocks
written as rows, the call operations through HTTP, the media-server token decoded, and reads of what was
stored."""

from __future__ import annotations

from typing import Any

import jwt
from sqlalchemy import insert, select

from meadhall.db.schema import call_participants, calls, relationships

MEDIA_KEY = "test-media-key"
MEDIA_SECRET = "test-media-secret-0123456789abcdef0123456789"
# settings_overrides of a module whose calls may reach the media server (voice is on with key and secret).
VOICE = {"MEDIA_API_KEY": MEDIA_KEY, "MEDIA_API_SECRET": MEDIA_SECRET}


async def conversation(api: Any, *people: Any) -> str:
    """A conversation of `people` opened by the first through the conversation routes: one-to-one for two,
    a group (owned by the first) for three or more. Returns its id."""
    opener, *others = people
    if len(others) == 1:
        r = await api.request("POST", "/users/@me/channels", opener, json={"recipient_id": others[0].id},
                              expect=None)
        assert r.status_code in (200, 201), r.text  # 200: the pair's conversation existed
        body = r.json()
    else:
        body = await api.post("/users/@me/channels/group", opener, json={"recipient_ids": [o.id for o in others]},
                              expect=201)
    return str(body["channel"]["id"])


async def add_participant(api: Any, channel_id: str, adder: Any, account: Any) -> None:
    """`adder` adds `account` to the conversation."""
    await api.put(f"/channels/{channel_id}/recipients/{account.id}", adder, expect=200)


async def block(rt: Any, blocker: Any, blocked: Any) -> None:
    """`blocker` blocks `blocked` (the blocker's row only, as a block is stored)."""
    async with rt.engine.begin() as conn:
        await conn.execute(insert(relationships).values(user_id=int(blocker.id), other_id=int(blocked.id),
                                                        type="blocked", since=rt.clock.now()))


def call_url(channel_id: str, tail: str = "") -> str:
    return f"/channels/{channel_id}/call{tail}"


async def start(api: Any, account: Any, channel_id: str, media: str | None = None, *, expect: int = 201) -> Any:
    body = None if media is None else {"media": media}
    return await api.post(call_url(channel_id), account, json=body, expect=expect)


async def join(api: Any, account: Any, channel_id: str, *, expect: int = 200) -> Any:
    return await api.post(call_url(channel_id, "/join"), account, expect=expect)


async def decline(api: Any, account: Any, channel_id: str, *, expect: int = 200) -> Any:
    return await api.post(call_url(channel_id, "/decline"), account, expect=expect)


async def leave(api: Any, account: Any, channel_id: str, *, expect: int = 200) -> Any:
    return await api.post(call_url(channel_id, "/leave"), account, expect=expect)


async def flags(api: Any, account: Any, channel_id: str, *, expect: int = 200, **values: Any) -> Any:
    return await api.patch(call_url(channel_id, "/@me"), account, json=values, expect=expect)


async def ongoing(api: Any, account: Any, channel_id: str) -> dict[str, Any]:
    return (await api.get(call_url(channel_id), account))["call"]


def participant(call: dict[str, Any], account: Any) -> dict[str, Any]:
    found = [p for p in call["participants"] if p["user_id"] == account.id]
    assert len(found) == 1, call["participants"]
    return found[0]


def states(call: dict[str, Any]) -> dict[str, str]:
    """user id -> participant state."""
    return {p["user_id"]: p["state"] for p in call["participants"]}


def claims(token: str, secret: str = MEDIA_SECRET) -> dict[str, Any]:
    """The media-server token's claims, its HS256 signature and expiry verified."""
    return jwt.decode(token, secret, algorithms=["HS256"], options={"verify_nbf": False})


async def stored_call(rt: Any, call_id: str) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
    """The call row and its participant rows (user id -> row) as stored."""
    async with rt.engine.connect() as conn:
        row = (await conn.execute(select(calls).where(calls.c.id == int(call_id)))).mappings().one()
        parts = (await conn.execute(select(call_participants)
                                    .where(call_participants.c.call_id == int(call_id)))).mappings()
        return dict(row), {p["user_id"]: dict(p) for p in parts}

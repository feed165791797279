"""Calls in direct conversations, for the call tests: conversations and blocks written as rows (the states
the calls start from), the call operations through HTTP, the media-server token decoded, and reads of
what was stored."""

from __future__ import annotations

from typing import Any

import jwt
from sqlalchemy import insert, select

from meadhall.db.schema import call_participants, calls, channels, dm_participants, relationships

MEDIA_KEY = "test-media-key"
MEDIA_SECRET = "test-media-secret-0123456789abcdef0123456789"
# settings_overrides of a module whose calls may reach the media server (voice is on with key and secret).
VOICE = {"MEDIA_API_KEY": MEDIA_KEY, "MEDIA_API_SECRET": MEDIA_SECRET}


async def conversation(rt: Any, *people: Any, group: bool | None = None) -> str:
    """A conversation of `people` (the first is the owner of a group), joined in that order; a group when
    there are three or more unless `group` says otherwise. Returns its id."""
    is_group = len(people) > 2 if group is None else group
    ids = [int(p.id) for p in people]
    channel_id = rt.ids.next()
    now = rt.clock.now()
    async with rt.engine.begin() as conn:
        await conn.execute(insert(channels).values(
            id=channel_id, guild_id=None, type="dm", name=None, topic=None, position=0, parent_id=None,
            slowmode_seconds=0, user_limit=None, background_file_id=None, icon_file_id=None,
            dm_owner_id=ids[0] if is_group else None, is_group=is_group,
            dm_pair=None if is_group else f"{min(ids)}:{max(ids)}", last_message_id=None, created_at=now))
        for n, uid in enumerate(ids):
            await conn.execute(insert(dm_participants).values(
                channel_id=channel_id, user_id=uid, joined_at=now.replace(microsecond=n * 1000)))
    return str(channel_id)


async def add_participant(rt: Any, channel_id: str, account: Any) -> None:
    """A participant added to the conversation's rows directly (no events)."""
    async with rt.engine.begin() as conn:
        await conn.execute(insert(dm_participants).values(channel_id=int(channel_id), user_id=int(account.id),
                                                          joined_at=rt.clock.now()))


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

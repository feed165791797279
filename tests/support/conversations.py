"""Direct conversations over HTTP (docs/social.md): opening one-to-one conversations, groups, their
recipients, name and icon, each call asserting the status it expects (`expect=`), and the Conversation shape."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update

from meadhall.db.schema import channels, dm_participants, users
from tests.support.shapes import MESSAGE_FIELDS, SUMMARY_FIELDS, is_id, parse_ts

CONVERSATIONS = "/users/@me/channels"
GROUPS = "/users/@me/channels/group"
CONVERSATION_FIELDS = {
    "id", "type", "guild_id", "is_group", "name", "icon_file_id", "dm_owner_id", "owner_id", "member_count",
    "members", "counterpart", "avatar", "status", "last_message", "last_message_id", "created_at",
}


def _id(who: Any) -> str:
    return who.id if hasattr(who, "id") else str(who)


async def open_dm(api: Any, a: Any, b: Any, *, expect: int = 201) -> Any:
    """`a` opens the one-to-one conversation with `b`: the Conversation (or the error body)."""
    body = await api.post(CONVERSATIONS, a, json={"recipient_id": _id(b)}, expect=expect)
    return body["channel"] if expect in (200, 201) else body


async def group(api: Any, owner: Any, *others: Any, name: str | None = None, expect: int = 201) -> Any:
    """`owner` creates a group with `others`: the Conversation (or the error body)."""
    body: dict[str, Any] = {"recipient_ids": [_id(o) for o in others]}
    if name is not None:
        body["name"] = name
    answer = await api.post(GROUPS, owner, json=body, expect=expect)
    return answer["channel"] if expect == 201 else answer


def recipient_url(conv: Any, user: Any) -> str:
    return f"/channels/{_id(conv) if not isinstance(conv, dict) else conv['id']}/recipients/{_id(user)}"


async def add_recipient(api: Any, who: Any, conv: Any, user: Any, *, expect: int = 200) -> Any:
    body = await api.put(recipient_url(conv, user), who, expect=expect)
    return body["channel"] if expect == 200 else body


async def remove_recipient(api: Any, who: Any, conv: Any, user: Any, *, expect: int = 204) -> Any:
    return await api.delete(recipient_url(conv, user), who, expect=expect)


async def leave(api: Any, who: Any, conv: Any, *, expect: int = 204) -> Any:
    return await remove_recipient(api, who, conv, "@me", expect=expect)


async def rename(api: Any, who: Any, conv: Any, name: str, *, expect: int = 200) -> Any:
    body = await api.patch(f"/channels/{conv['id']}", who, json={"name": name}, expect=expect)
    return body["channel"] if expect == 200 else body


async def conversations_of(api: Any, who: Any) -> list[dict[str, Any]]:
    listed = (await api.get(CONVERSATIONS, who))["channels"]
    for conv in listed:
        check_conversation(conv)
    return listed


def member_ids(conv: dict[str, Any]) -> set[str]:
    return {m["id"] for m in conv["members"]}


def check_conversation(d: dict[str, Any], receiver: Any = None) -> None:
    """The Conversation shape (docs/social.md), optionally from `receiver`'s point of view."""
    assert set(d) == CONVERSATION_FIELDS, set(d) ^ CONVERSATION_FIELDS
    assert is_id(d["id"]) and d["type"] == "dm" and d["guild_id"] is None
    assert d["member_count"] == len(d["members"])
    for m in d["members"]:
        assert set(m) == SUMMARY_FIELDS
    assert d["owner_id"] == d["dm_owner_id"]
    parse_ts(d["created_at"])
    if d["is_group"]:
        assert d["counterpart"] is None and d["avatar"] is None and d["status"] is None
        assert d["name"] and d["dm_owner_id"] in member_ids(d)
    else:
        assert d["name"] is None and d["dm_owner_id"] is None and d["icon_file_id"] is None
        assert d["member_count"] == 2 and d["counterpart"] is not None
        assert d["avatar"] == d["counterpart"]["avatar"] and d["status"] == d["counterpart"]["status"]
    if d["last_message"] is None:
        assert d["last_message_id"] is None
    else:
        assert set(d["last_message"]) == MESSAGE_FIELDS and d["last_message"]["id"] == d["last_message_id"]
    if receiver is not None:
        assert _id(receiver) in member_ids(d)
        if not d["is_group"]:
            assert d["counterpart"] is not None and d["counterpart"]["id"] != _id(receiver)


async def conversation_row(rt: Any, conv: Any) -> Any:
    async with rt.read() as uow:
        return (await uow.conn.execute(select(channels).where(channels.c.id == int(conv["id"])))).mappings().first()


async def participant_ids(rt: Any, conv: Any) -> set[str]:
    async with rt.read() as uow:
        rows = await uow.conn.execute(select(dm_participants.c.user_id)
                                      .where(dm_participants.c.channel_id == int(conv["id"])))
        return {str(r) for r in rows.scalars()}


async def soft_delete(rt: Any, account: Any) -> None:
    """Mark the account deleted (what soft deletion leaves for others to see)."""
    async with rt.uow() as uow:
        await uow.conn.execute(update(users).where(users.c.id == int(account.id)).values(deleted_at=uow.now))

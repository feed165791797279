"""Message calls over HTTP: send, read a page of history, react, and the events a send produced."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from tests.support.http import API, Api, unwrap

THUMBS = "\U0001F44D"


def url(channel_id: str, path: str = "") -> str:
    return f"{API}/channels/{channel_id}/messages{path}"


async def send(client: Any, account: Any, channel_id: str, content: str = "hello", **body: Any) -> Any:
    """The response of sending (not asserted: callers check refusals too)."""
    return await client.post(url(channel_id), json={"content": content, **body}, headers=account.headers)


async def post(client: Any, account: Any, channel_id: str, content: str = "hello", *, expect: int = 201,
               **body: Any) -> Any:
    """The sent message (the error body when `expect` is not 201)."""
    sent = await Api(client).post(f"/channels/{channel_id}/messages", account, expect=expect,
                                  json={"content": content, **body})
    return unwrap(sent, "message", expect, 201)


async def history(client: Any, account: Any, channel_id: str, *, expect: int = 200, **params: Any) -> Any:
    return await Api(client).get(f"/channels/{channel_id}/messages", account, params=params, expect=expect)


async def message_of(client: Any, account: Any, channel_id: str, message_id: str, *, expect: int = 200) -> Any:
    body = await Api(client).get(f"/channels/{channel_id}/messages/{message_id}", account, expect=expect)
    return unwrap(body, "message", expect, 200)


def reaction_url(channel_id: str, message_id: str, emoji: str, user_id: str | None = None) -> str:
    reaction = f"{API}/channels/{channel_id}/messages/{message_id}/reactions/{quote(emoji, safe='')}"
    return reaction if user_id is None else f"{reaction}/{user_id}"


async def react(client: Any, account: Any, channel_id: str, message_id: str, emoji: str = THUMBS,
                expect: int = 204) -> Any:
    r = await client.put(reaction_url(channel_id, message_id, emoji), headers=account.headers)
    assert r.status_code == expect, r.text
    return r


async def unreact(client: Any, account: Any, channel_id: str, message_id: str, emoji: str = THUMBS,
                  expect: int = 204) -> Any:
    r = await client.delete(reaction_url(channel_id, message_id, emoji), headers=account.headers)
    assert r.status_code == expect, r.text
    return r


def ids(*accounts: Any) -> tuple[int, ...]:
    return tuple(sorted(int(a.id) for a in accounts))


async def events(capture_events: Any, type_: str) -> list[Any]:
    """The captured events of this type once the bus has delivered everything published so far."""
    await capture_events.settle()
    return capture_events.of_type(type_)


async def ack(client: Any, account: Any, channel_id: str, message_id: str | None = None) -> Any:
    """The response of marking a room read (up to `message_id`, or its last message)."""
    body = None if message_id is None else {"message_id": message_id}
    return await client.post(f"{API}/channels/{channel_id}/ack", json=body, headers=account.headers)


async def edit_message(client: Any, account: Any, channel_id: str, message_id: str, content: str, *,
                       expect: int = 200) -> Any:
    """The edited message (the error body when `expect` is not 200)."""
    body = await Api(client).patch(f"/channels/{channel_id}/messages/{message_id}", account,
                                   json={"content": content}, expect=expect)
    return unwrap(body, "message", expect, 200)


async def delete_message(client: Any, account: Any, channel_id: str, message_id: str, *, expect: int = 204) -> None:
    await Api(client).delete(f"/channels/{channel_id}/messages/{message_id}", account, expect=expect)


def pin_url(channel_id: str, message_id: str) -> str:
    return f"{API}/channels/{channel_id}/pins/{message_id}"


async def pin(client: Any, account: Any, channel_id: str, message_id: str, expect: int = 204) -> Any:
    r = await client.put(pin_url(channel_id, message_id), headers=account.headers)
    assert r.status_code == expect, r.text
    return r


async def unpin(client: Any, account: Any, channel_id: str, message_id: str, expect: int = 204) -> Any:
    r = await client.delete(pin_url(channel_id, message_id), headers=account.headers)
    assert r.status_code == expect, r.text
    return r


async def start_typing(client: Any, account: Any, channel_id: str, *, expect: int = 204) -> None:
    await Api(client).post(f"/channels/{channel_id}/typing", account, expect=expect)

"""The room the message-view browser tests share (markdown, the message menu, pins): freya's server with
thor in it, a signed-in page on a room, and a message's `article` found by its text."""

from __future__ import annotations

from typing import Any

from tests.support.browser import ORIGIN, PASSWORD, signed_in_context

WAIT = 10000

# Sending and typing are loosened: on a loaded machine the client's typing notices can reach the service
# closer together than it spaced them, and a 429 would show as a console error these tests forbid.
SETTINGS = {"PUBLIC_URL": ORIGIN,
            "RATE_LIMITS": {"global": "100000/60", "messages.send": "100000/60", "search": "1000/60", "typing": "100/3"}}


async def hall(client: Any, accounts: Any) -> tuple[Any, Any, str, str]:
    """freya's server with thor in it: (freya, thor, guild id, room id)."""
    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    r = await client.post("/api/v1/guilds", json={"name": "Long Winter"}, headers=freya.headers)
    guild = r.json()["guild"]
    room = guild["system_channel_id"]
    r = await client.post(f"/api/v1/channels/{room}/invites", json={}, headers=freya.headers)
    r = await client.post(f"/api/v1/invites/{r.json()['invite']['code']}", headers=thor.headers)
    assert r.status_code == 200, r.text
    return freya, thor, guild["id"], room


async def post(client: Any, who: Any, room: str, content: str) -> str:
    """A message sent through the API; its id."""
    r = await client.post(f"/api/v1/channels/{room}/messages", json={"content": content}, headers=who.headers)
    assert r.status_code == 201, r.text
    return str(r.json()["message"]["id"])


async def open_room(browser: Any, login: str, guild: str, room: str, **options: Any) -> tuple[Any, Any]:
    context = await signed_in_context(browser, ORIGIN, login, PASSWORD, **options)
    page = await context.new_page()
    await page.goto(f"{ORIGIN}/channels/{guild}/{room}")
    return context, page


def article(page: Any, text: str) -> Any:
    return page.get_by_role("log", name="Messages").get_by_role("article").filter(has_text=text)

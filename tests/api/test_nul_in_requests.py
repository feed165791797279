"""A NUL in the path or in a query parameter answers 422 `validation.failed` naming the parameter
(docs/reference/errors.md), before any route, on every database: PostgreSQL cannot hold or even compare a text
with a NUL, so one that reached a query there answered 500 (an invite code, a webhook token, a search)."""

from __future__ import annotations

import pytest

from tests.support.guilds import make_guild
from tests.support.http import API, invalid


@pytest.mark.parametrize(("path", "field"), [
    ("/invites/ab%00cd", "path"),
    ("/webhooks/1/tok%00en", "path"),
    ("/link-previews?url=http%3A%2F%2Fexample.com%2F%00", "url"),
    ("/guilds/public?q=a%00b", "q"),
    ("/users/@me/channels?unknown=a%00b", "unknown"),
    ("/guilds/{guild}/members?q=a%00b", "q"),
    ("/channels/{room}/messages/search?q=a%00b", "q"),
], ids=["invite code", "webhook token", "link preview url", "public guilds q", "any parameter", "members q",
        "message search q"])
async def test_a_nul_in_the_path_or_query_answers_422(client, accounts, path, field):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice)
    url = API + path.format(guild=guild["id"], room=guild["system_channel_id"])

    r = await client.request("POST" if "webhooks" in path else "GET", url, headers=alice.headers,
                             json={"content": "hi"} if "webhooks" in path else None)

    invalid(r, field)


async def test_the_public_invitation_page_refuses_a_nul_too(client):
    r = await client.get("/invite/ab%00cd")

    invalid(r, "path")


async def test_a_percent_sign_that_is_not_a_nul_passes(client, accounts):
    alice = await accounts.register("alice")

    r = await client.get(f"{API}/guilds/public", params={"q": "100%0 sure"}, headers=alice.headers)

    assert r.status_code == 200, r.text

"""A webhook execution's `avatar_url` is a URL: a control character in it answers 422 `validation.failed`
(docs/reference/errors.md), never 500; PostgreSQL cannot store a text holding a NUL."""

from __future__ import annotations

import pytest

from tests.support.guilds import make_guild
from tests.support.http import API, invalid


@pytest.mark.parametrize("avatar_url", ["https://a.example/\x00x", "https://a.example/\x01x", "https://a.example/\x7f"])
async def test_a_control_character_in_avatar_url_answers_422(client, accounts, avatar_url):
    owner = await accounts.register("owner")
    guild = await make_guild(client, owner)
    r = await client.post(f"{API}/channels/{guild['system_channel_id']}/webhooks", json={"name": "Deploys"},
                          headers=owner.headers)
    hook = r.json()["webhook"]

    r = await client.post(f"{API}/webhooks/{hook['id']}/{hook['token']}",
                          json={"content": "deployed", "avatar_url": avatar_url})

    invalid(r, "avatar_url")

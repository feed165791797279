"""`meadhall import-discord --into` after the guild changed (docs/migrating.md): a room, category or role an
earlier import made and that was deleted since is made again, with the messages it held."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.discord_export import Channel, guild, role, user
from tests.support.http import Api


def answer(ran: tuple[int, str, str]) -> dict[str, Any]:
    code, stdout, stderr = ran
    assert code == 0, (stdout, stderr)
    return json.loads(stdout.strip().splitlines()[-1])


async def test_deleted_rooms_categories_and_roles_are_made_again(client: Any, accounts: Any, meadhall: Any,
                                                                 tmp_path: Path) -> None:
    api = Api(client)
    owner = await accounts.register("boss")
    ann = user("201", "ann", roles=[role("501", "Elder")])
    general, news = Channel("301", "general"), Channel("302", "news", category="News", category_id="901")
    general.say(ann, "hello")
    news.say(ann, "the hall opens")
    first = tmp_path / "first"
    first.mkdir()
    general.write(first / "general.json", guild())
    news.write(first / "news.json", guild())
    guild_id = answer(await meadhall("import-discord", str(first), "--owner-email", "boss@example.com"))["guild_id"]

    rooms = {c["name"]: c for c in (await api.get(f"/guilds/{guild_id}/channels", owner))["channels"]}
    await api.delete(f"/channels/{rooms['news']['id']}", owner)
    await api.delete(f"/channels/{rooms['News']['id']}", owner)
    roles = {r["name"]: r["id"] for r in (await api.get(f"/guilds/{guild_id}/roles", owner))["roles"]}
    await api.delete(f"/guilds/{guild_id}/roles/{roles['Elder']}", owner)

    general.say(ann, "a new month")
    later = tmp_path / "later"
    later.mkdir()
    general.write(later / "general.json", guild())
    news.write(later / "news.json", guild())
    second = answer(await meadhall("import-discord", str(later), "--owner-email", "boss@example.com",
                                   "--into", guild_id))
    assert second["messages"] == 2  # the new one, and the one of the deleted room, written again
    rooms = {c["name"]: c for c in (await api.get(f"/guilds/{guild_id}/channels", owner))["channels"]}
    assert rooms["News"]["type"] == "category" and rooms["news"]["parent_id"] == rooms["News"]["id"]
    page = await api.get(f"/channels/{rooms['news']['id']}/messages", owner, params={"limit": 10})
    assert [m["content"] for m in page["messages"]] == ["the hall opens"]
    roles = {r["name"]: r["id"] for r in (await api.get(f"/guilds/{guild_id}/roles", owner))["roles"]}
    found = await api.get(f"/guilds/{guild_id}/members", owner, params={"limit": 100})
    assert {m["user"]["username"]: m["roles"] for m in found["members"]}["ann"] == [roles["Elder"]]

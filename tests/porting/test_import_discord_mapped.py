"""Mapped accounts in `meadhall import-discord --map-users` (docs/migrating.md): several source users mapped to
one account react once, and mapped accounts join only in the import's last transaction, with the owner, so no
real account sees a guild still being written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.discord_export import (
    Channel,
    break_file_store,
    guild,
    long_export_ending_with_a_file,
    repair_file_store,
    short,
    user,
)
from tests.support.http import Api


def answer(ran: tuple[int, str, str]) -> dict[str, Any]:
    code, stdout, stderr = ran
    assert code == 0, (stdout, stderr)
    return json.loads(stdout.strip().splitlines()[-1])


async def test_two_sources_mapped_to_one_account_react_once(client: Any, accounts: Any, meadhall: Any,
                                                            tmp_path: Path) -> None:
    api = Api(client)
    await accounts.register("boss")
    ann_here = await accounts.register("annhere")
    ann, alt, eve = user("201", "ann"), user("202", "ann-alt"), user("203", "eve")
    general = Channel("301", "general")
    thumbs = {"id": "", "name": "👍", "code": "thumbsup", "isAnimated": False, "imageUrl": ""}
    general.say(eve, "vote", reactions=[{"emoji": thumbs, "count": 3, "users": [short(ann), short(alt), short(eve)]}])
    folder = tmp_path / "export"
    folder.mkdir()
    general.write(folder / "general.json", guild())
    mapping = tmp_path / "map.csv"
    mapping.write_text("201,annhere\n202,annhere\n")
    result = answer(await meadhall("import-discord", str(folder), "--owner-email", "boss@example.com",
                                   "--map-users", str(mapping)))
    rooms = (await api.get(f"/guilds/{result['guild_id']}/channels", ann_here))["channels"]
    room = next(c for c in rooms if c["type"] == "text")
    [vote] = (await api.get(f"/channels/{room['id']}/messages", ann_here, params={"limit": 10}))["messages"]
    assert [(r["emoji"], r["count"]) for r in vote["reactions"]] == [("👍", 2)]


async def test_mapped_accounts_are_no_members_before_the_last_transaction(
        client: Any, accounts: Any, meadhall: Any, settings: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    api = Api(client)
    await accounts.register("boss")
    ann_here = await accounts.register("annhere")

    async def killed(*_args: Any) -> None:
        """A process killed outright after committed batches: nothing is undone."""

    monkeypatch.setattr("meadhall.porting.discord.importer.undo", killed)
    folder = tmp_path / "big"
    long_export_ending_with_a_file(folder)
    mapping = tmp_path / "map.csv"
    mapping.write_text("201,annhere\n")
    aside = break_file_store(settings)
    try:
        failed = await meadhall("import-discord", str(folder), "--owner-email", "boss@example.com",
                                "--map-users", str(mapping))
    finally:
        repair_file_store(settings, aside)
    assert failed[0] == 1 and "NotADirectoryError" in failed[2]
    assert (await api.get("/users/@me/guilds", ann_here))["guilds"] == []

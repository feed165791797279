"""Symbolic links in what `meadhall import-discord` is given (docs/migrating.md): a JSON file of a folder that
links out of the folder is skipped and counted, and a linked JSON file named directly reads attachments from
the folder it was named in, never from beside its target. An attachment linking out stays refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.discord_export import Channel, guild, user
from tests.support.http import Api


def answer(ran: tuple[int, str, str]) -> dict[str, Any]:
    code, stdout, stderr = ran
    assert code == 0, (stdout, stderr)
    return json.loads(stdout.strip().splitlines()[-1])


def attached(url: str) -> dict[str, Any]:
    return {"id": "1", "url": url, "fileName": Path(url).name, "fileSizeBytes": 6}


async def test_a_json_link_out_of_the_folder_is_skipped(client: Any, accounts: Any, meadhall: Any,
                                                        tmp_path: Path) -> None:
    owner = await accounts.register("boss")
    given, outside = tmp_path / "given", tmp_path / "outside"
    given.mkdir()
    outside.mkdir()
    general = Channel("301", "general")
    general.say(user("201", "ann"), "hello")
    general.write(given / "general.json", guild())
    secret = Channel("302", "secret")
    secret.say(user("202", "eve"), "private words")
    secret.write(outside / "secret.json", guild())
    (given / "leak.json").symlink_to(outside / "secret.json")

    result = answer(await meadhall("import-discord", str(given), "--owner-email", "boss@example.com"))
    assert result["rooms"] == 1 and result["messages"] == 1
    assert result["skipped"]["export_outside_folder"] == 1
    rooms = (await Api(client).get(f"/guilds/{result['guild_id']}/channels", owner))["channels"]
    assert "secret" not in {c["name"] for c in rooms}


async def test_a_linked_json_named_directly_reads_no_file_beside_its_target(
        client: Any, accounts: Any, meadhall: Any, tmp_path: Path) -> None:
    owner = await accounts.register("boss")
    given, outside = tmp_path / "given", tmp_path / "outside"
    (given / "media").mkdir(parents=True)
    (outside / "media").mkdir(parents=True)
    (outside / "media" / "beside.txt").write_text("secret")
    (outside / "linked.txt").write_text("secret")
    (given / "media" / "link.txt").symlink_to(outside / "linked.txt")
    general = Channel("301", "general")
    ann = user("201", "ann")
    general.say(ann, "beside the target", attachments=[attached("media/beside.txt")])
    general.say(ann, "through a link", attachments=[attached("media/link.txt")])
    general.write(outside / "general.json", guild())
    (given / "export.json").symlink_to(outside / "general.json")

    result = answer(await meadhall("import-discord", str(given / "export.json"), "--owner-email",
                                   "boss@example.com"))
    assert result["messages"] == 2 and result["attachments"] == 0
    assert result["skipped"]["attachment_missing_file"] == 1  # given/media/beside.txt: not there
    assert result["skipped"]["attachment_outside_export"] == 1  # the link pointing out
    api = Api(client)
    rooms = (await api.get(f"/guilds/{result['guild_id']}/channels", owner))["channels"]
    [room] = [c for c in rooms if c["type"] == "text"]
    page = await api.get(f"/channels/{room['id']}/messages", owner, params={"limit": 10})
    assert all(m["attachments"] == [] for m in page["messages"])

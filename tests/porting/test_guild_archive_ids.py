"""`meadhall import-guild` gives each room's messages ids from their own source times (docs/migrating.md,
"Between Meadhall instances"): the ids of the whole guild sort by time across rooms, as the source's did, so a
room whose history is older than another's does not land after it."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.support.guilds import make_guild, room
from tests.support.http import Api
from tests.support.messages import history, post


def retimed(src: Path, out: Path, starts: list[datetime]) -> list[str]:
    """A copy of the archive whose n-th messages member (in archive order) starts at `starts[n]`, one second
    between its messages, with the manifest's digests made anew; returns the rooms in that order."""
    with tarfile.open(src, "r:gz") as tar:
        members = [(info.name, tar.extractfile(info).read()) for info in tar.getmembers()]  # type: ignore[union-attr]
    rooms: list[str] = []
    for index, (name, data) in enumerate(members):
        if name.startswith("messages/"):
            start = starts[len(rooms)]
            rooms.append(name.removeprefix("messages/").removesuffix(".ndjson"))
            lines = [json.loads(line) for line in data.splitlines()]
            for i, line in enumerate(lines):
                line["created_at"] = (start + timedelta(seconds=i)).isoformat()
            members[index] = (name, b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    manifest = next(i for i, (name, _) in enumerate(members) if name == "manifest.json")
    body = json.loads(members[manifest][1])
    body["sha256"] = {name: hashlib.sha256(data).hexdigest() for name, data in members if name != "manifest.json"}
    members[manifest] = ("manifest.json", json.dumps(body).encode())
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    out.write_bytes(gzip.compress(buffer.getvalue()))
    return rooms


async def test_an_older_room_sorts_before_a_newer_one(client, accounts, meadhall, tmp_path):
    owner = await accounts.register("owner")
    guild = await make_guild(client, owner)
    other = await room(client, owner, guild["id"], name="other")
    for channel in (guild["system_channel_id"], other["id"]):
        await post(client, owner, channel, f"in {channel}")
    exported = tmp_path / "hall.tar.gz"
    await meadhall("export-guild", "--guild", guild["id"], "--out", str(exported))
    # The room the import writes first holds 2025's messages, the second one 2020's.
    newer, older = datetime(2025, 6, 1, tzinfo=UTC), datetime(2020, 1, 1, tzinfo=UTC)
    archive = tmp_path / "retimed.tar.gz"
    first, second = retimed(exported, archive, [newer, older])
    result = (await meadhall("import-guild", str(archive), "--owner-email", "owner@example.com")).json
    rooms = (await Api(client).get(f"/guilds/{result['guild_id']}/channels", owner))["channels"]
    by_name = {c["name"]: c["id"] for c in rooms}
    names = {guild["system_channel_id"]: next(c["name"] for c in rooms if c["name"] != "other"), other["id"]: "other"}
    found = {}
    for old_id in (first, second):
        page = await history(client, owner, by_name[names[old_id]])
        found[old_id] = next(m for m in page["messages"] if m["content"] == f"in {old_id}")
    assert found[second]["created_at"] < found[first]["created_at"]
    assert int(found[second]["id"]) < int(found[first]["id"]), "a 2020 message takes an id before 2025's"

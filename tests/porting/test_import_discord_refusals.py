"""What `meadhall import-discord` refuses (3.21; docs/migrating.md): direct-message exports, exports of more
than one server, a missing PATH or `--into` server, an unknown owner or mapped account, a file that is not an
export; each with its error code on stderr, nothing on stdout, exit 1, and nothing left behind: a failure after
the guild was begun (an unknown mapped account is found after it) leaves no guild, no imported author, no link."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from meadhall.db.schema import guilds, messages, users
from meadhall.db.schema.imports import import_links
from tests.support.discord_export import (
    Channel,
    break_file_store,
    filler,
    guild,
    hall_export,
    long_export_ending_with_a_file,
    repair_file_store,
    user,
)
from tests.support.http import Api


def refused(ran: tuple[int, str, str], code: str) -> str:
    exit_code, stdout, stderr = ran
    assert exit_code == 1, (stdout, stderr)
    assert stdout.strip() == ""
    error = json.loads(stderr.strip().splitlines()[-1])["error"]
    assert error["code"] == code, error
    return str(error["message"])


async def totals(rt: Any) -> tuple[int, ...]:
    async with rt.engine.connect() as conn:
        found = []
        for table in (guilds, users, messages, import_links):
            found.append(int((await conn.execute(select(func.count()).select_from(table))).scalar_one()))
        found.append(int((await conn.execute(select(func.count()).select_from(users).where(
            users.c.imported.is_(True)))).scalar_one()))
    return tuple(found)


def stored_files(settings: Any) -> list[Path]:
    root = Path(settings.DATA_DIR) / "files"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def one_channel(folder: Path, *, guild_id: str = "111", type_: str = "GuildTextChat", name: str = "general") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    channel = Channel("301", name, type=type_)
    channel.say(user("201", "ann"), "hello")
    [path] = channel.write(folder / f"{name}-{guild_id}.json", guild(guild_id))
    return path


async def test_refusals_name_their_code_and_leave_nothing(client: Any, accounts: Any, meadhall: Any, rt: Any,
                                                          settings: Any, tmp_path: Path) -> None:
    owner = await accounts.register("boss")
    before = await totals(rt)
    good = one_channel(tmp_path / "good")
    email = ("--owner-email", "boss@example.com")

    dm = one_channel(tmp_path / "dm", guild_id="0", type_="DirectTextChat")
    assert "direct-message" in refused(await meadhall("import-discord", str(dm), *email), "import.unsupported")
    other = one_channel(tmp_path / "good", guild_id="222", name="elsewhere")
    refused(await meadhall("import-discord", str(good), str(other), *email), "import.mixed_guilds")
    refused(await meadhall("import-discord", str(tmp_path / "good"), *email), "import.mixed_guilds")
    refused(await meadhall("import-discord", str(tmp_path / "nowhere.json"), *email), "import.not_found")
    refused(await meadhall("import-discord", str(tmp_path / "missing-folder"), *email), "import.not_found")
    (tmp_path / "nothing").mkdir()
    refused(await meadhall("import-discord", str(tmp_path / "nothing"), *email), "import.not_found")
    refused(await meadhall("import-discord", str(good), *email, "--into", "123456789"), "import.not_found")
    refused(await meadhall("import-discord", str(good), *email, "--into", "not-an-id"), "import.not_found")
    refused(await meadhall("import-discord", str(good), "--owner-email", "nobody@example.com"), "user.not_found")
    broken = tmp_path / "broken.json"
    broken.write_text('{"guild": {"id": "111", "name": "Old Hall"}, "channel": {"id": "1", "type": "GuildTextChat"'
                      ', "name": "x"}, "messages": [{"id": "1", "timestamp": "2022-01-01T00:00:00+00:00", "content"')
    refused(await meadhall("import-discord", str(broken), *email), "import.unsupported")
    not_export = tmp_path / "package.json"
    not_export.write_text('{"name": "left-pad"}')
    refused(await meadhall("import-discord", str(not_export), *email), "import.unsupported")
    refused(await meadhall("import-discord", str(good), *email, "--name", "x"), "validation.failed")

    assert await totals(rt) == before
    guilds_of_owner = await Api(client).get("/users/@me/guilds", owner)
    assert guilds_of_owner["guilds"] == []


async def test_a_failure_after_the_guild_was_begun_leaves_no_guild_authors_or_files(
        client: Any, accounts: Any, meadhall: Any, rt: Any, settings: Any, tmp_path: Path) -> None:
    owner = await accounts.register("boss")
    before, files_before = await totals(rt), stored_files(settings)
    hall = hall_export(tmp_path / "export", "http://127.0.0.1:9")
    mapping = tmp_path / "map.csv"
    mapping.write_text("201,nobody_here\n")
    message = refused(await meadhall("import-discord", str(hall.folder), "--owner-email", "boss@example.com",
                                     "--map-users", str(mapping)), "import.not_found")
    assert "nobody_here" in message
    assert await totals(rt) == before
    assert stored_files(settings) == files_before
    assert (await Api(client).get("/users/@me/guilds", owner))["guilds"] == []

    # A malformed map is refused before anything is read.
    mapping.write_text("ann,annhere\n")
    refused(await meadhall("import-discord", str(hall.folder), "--owner-email", "boss@example.com",
                           "--map-users", str(mapping)), "validation.failed")
    assert await totals(rt) == before


async def test_a_failure_after_committed_batches_is_undone(client: Any, accounts: Any, meadhall: Any, rt: Any,
                                                           settings: Any, tmp_path: Path) -> None:
    owner = await accounts.register("boss")
    before = await totals(rt)
    folder = tmp_path / "big"
    long_export_ending_with_a_file(folder)
    aside = break_file_store(settings)
    try:
        refused_with = await meadhall("import-discord", str(folder), "--owner-email", "boss@example.com")
    finally:
        repair_file_store(settings, aside)
    assert refused_with[0] == 1 and refused_with[1].strip() == ""
    error = json.loads(refused_with[2].strip().splitlines()[-1])["error"]  # the envelope, not a trace
    assert error["code"] == "internal.error" and "NotADirectoryError" in error["message"]  # the file store
    assert await totals(rt) == before
    assert (await Api(client).get("/users/@me/guilds", owner))["guilds"] == []


async def test_a_failed_import_into_a_guild_leaves_it_as_it_was(client: Any, accounts: Any, meadhall: Any,
                                                                rt: Any, settings: Any, tmp_path: Path) -> None:
    api = Api(client)
    owner = await accounts.register("boss")
    hall = hall_export(tmp_path / "export", "http://127.0.0.1:9")
    code, stdout, stderr = await meadhall("import-discord", str(hall.folder), "--owner-email", "boss@example.com")
    assert code == 0, stderr
    guild_id = json.loads(stdout.strip().splitlines()[-1])["guild_id"]

    async def seen() -> Any:
        rooms = (await api.get(f"/guilds/{guild_id}/channels", owner))["channels"]
        people = (await api.get(f"/guilds/{guild_id}/members", owner, params={"limit": 100}))["members"]
        roles = (await api.get(f"/guilds/{guild_id}/roles", owner))["roles"]
        general = next(c["id"] for c in rooms if c["name"] == "general")
        history = (await api.get(f"/channels/{general}/messages", owner, params={"limit": 100}))["messages"]
        return sorted(c["id"] for c in rooms), sorted(m["user"]["id"] for m in people), \
            sorted(r["id"] for r in roles), [m["id"] for m in history], await totals(rt)

    was = await seen()
    later = tmp_path / "later"
    later.mkdir()
    general = hall.channels["general"]
    filler(general, user("207", "gudrun"), 4500)
    (later / "general.json_Files").mkdir()
    (later / "general.json_Files" / "b.txt").write_text("late file")
    general.say(hall.people["ann"], "late", attachments=[{"id": "9", "url": "general.json_Files/b.txt",
                                                          "fileName": "b.txt", "fileSizeBytes": 9}])
    Channel("309", "brand-new").write(later / "brand-new.json", guild())
    general.write(later / "general.json", guild())
    aside = break_file_store(settings)
    try:
        failed = await meadhall("import-discord", str(later), "--owner-email", "boss@example.com", "--into", guild_id)
    finally:
        repair_file_store(settings, aside)
    assert failed[0] == 1 and "NotADirectoryError" in failed[2]
    assert await seen() == was

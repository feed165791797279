"""`meadhall import-discord`: read the exports (a first streaming pass), then write the guild, its people
and its history, committed every few thousand messages (porting/transactions.py says why). An import failing
part-way (a bad file found late, an unknown mapped account, a full disk) is undone: no guild is left behind
and, with `--into`, the existing guild is left as it was; the content of files it stored is removed again.
No event is queued: the guild appears in READY once its owner joins it, in the last transaction.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meadhall.accounts import queries as account_queries
from meadhall.accounts.signin import email_lookup
from meadhall.audit.record import record
from meadhall.core.text import check_single_line, norm
from meadhall.db.uow import UnitOfWork
from meadhall.guilds import queries as guild_queries
from meadhall.porting.discord.history import History
from meadhall.porting.discord.reader import DiscordImportError, export_files
from meadhall.porting.discord.scan import Scan, open_files
from meadhall.porting.discord.structure import (
    Built,
    build_emojis,
    build_people,
    build_roles,
    build_rooms,
    join_mapped,
)
from meadhall.porting.progress import progress
from meadhall.porting.transactions import Batches, undo
from meadhall.porting.writer import BatchWriter
from meadhall.runtime import Runtime


@dataclass(frozen=True)
class Options:
    paths: list[Path]
    owner_email: str
    name: str | None = None
    map_users: Path | None = None
    into: int | None = None


def read_user_map(path: Path) -> dict[str, str]:
    """`source_user_id,local_username` lines (blank lines and `#` comments skipped)."""
    if not path.is_file():
        raise DiscordImportError("import.not_found", f"{path} does not exist")
    found: dict[str, str] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for number, row in enumerate(csv.reader(handle), start=1):
            if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
                continue
            if len(row) != 2 or not row[0].strip().isdigit() or not row[1].strip():
                raise DiscordImportError("validation.failed",
                                         f"{path.name} line {number}: expected source_user_id,local_username")
            found[row[0].strip()] = row[1].strip()
    return found


def _guild_name(chosen: str | None, scan: Scan) -> str:
    assert scan.guild is not None
    name = " ".join((chosen if chosen is not None else str(scan.guild.get("name") or "")).split())
    if not 2 <= len(name) <= 100:
        raise DiscordImportError("validation.failed", "name: must be 2-100 characters")
    try:
        check_single_line(name)
    except ValueError as err:
        raise DiscordImportError("validation.failed", f"name: {err}") from None
    return name


async def _owner(rt: Runtime, uow: UnitOfWork, email: str) -> dict[str, Any]:
    row = await account_queries.select_user_by_email(uow.conn, email_lookup(rt, email.strip()))
    if row is None or row["deleted_at"] is not None or row.get("imported"):
        raise DiscordImportError("user.not_found", f"no account with the email {email}")
    return dict(row)


async def _mapped(uow: UnitOfWork, wanted: dict[str, str]) -> dict[str, tuple[int, str]]:
    found: dict[str, tuple[int, str]] = {}
    for source, username in wanted.items():
        row = await account_queries.select_user_by_username(uow.conn, norm(username))
        if row is None or row["deleted_at"] is not None or row.get("imported"):
            raise DiscordImportError("import.not_found", f"--map-users: no local account {username!r}")
        found[source] = (int(row["id"]), str(row["display_name"]))
    return found


async def import_discord(rt: Runtime, options: Options) -> dict[str, Any]:
    found = export_files(options.paths)
    roots = found.roots
    headers = open_files(found.files)
    guild_ids = {str(h.guild["id"]) for h in headers}
    if len(guild_ids) > 1:
        raise DiscordImportError("import.mixed_guilds", "the exports come from more than one server")
    wanted_map = read_user_map(options.map_users) if options.map_users is not None else {}
    scan = Scan()
    try:
        with progress("Reading exports") as bar:
            scan.read(headers, bar.advance)
        name = _guild_name(options.name, scan) if options.into is None else None
        return await _write(rt, options, scan, roots, name, wanted_map, found.outside)
    finally:
        scan.close()


async def _write(rt: Runtime, options: Options, scan: Scan, roots: list[Path], name: str | None,
                 wanted_map: dict[str, str], outside: int = 0) -> dict[str, Any]:
    batches = Batches(rt)
    writer: BatchWriter | None = None
    try:
        uow = await batches.begin()
        owner = await _owner(rt, uow, options.owner_email)
        if options.into is not None:
            if await guild_queries.select_guild(uow.conn, options.into) is None:
                raise DiscordImportError("import.not_found", f"no server {options.into}")
            writer = await BatchWriter.existing(rt, uow, options.into)
        else:
            assert name is not None
            writer = await BatchWriter.new_guild(rt, uow, owner_id=int(owner["id"]), name=name, owner_joins=False)
        mapped = await _mapped(uow, wanted_map)
        built = Built()
        if outside:
            writer.counts.skip("export_outside_folder", outside)
        role_ids = await build_roles(writer, scan, fresh=options.into is None)
        built.rooms = await build_rooms(writer, scan)
        await build_people(writer, scan, mapped, role_ids, built)
        dropped = await build_emojis(writer, scan, roots, built)
        if dropped:
            writer.counts.skip("custom_emoji", dropped)

        async def checkpoint() -> None:
            assert writer is not None
            await writer.flush()
            writer.switch(await batches.next())

        with progress("Importing messages", total=scan.total) as bar:
            await History(writer, scan, built, roots).write(bar, checkpoint)
        await join_mapped(writer, built)
        if options.into is None:
            await writer.add_owner()
        await writer.finish(readers=[int(owner["id"]), *(user_id for user_id, _ in mapped.values())])
        result = _result(writer, built)
        await record(writer.uow, "guild.import", actor_id=None, target_type="guild", target_id=writer.guild_id,
                     guild_id=writer.guild_id, data={"source": "discord", **{k: v for k, v in result.items()
                                                                                if k != "guild_id"}})
        await batches.commit()
    except BaseException as error:
        await batches.abort(error)
        if writer is not None:
            await undo(rt, writer)
            await writer.discard_stored()
        raise
    return result


def _result(writer: BatchWriter, built: Built) -> dict[str, Any]:
    counts = writer.counts
    return {
        "guild_id": str(writer.guild_id),
        "rooms": len(built.rooms),
        "messages": counts.messages,
        "attachments": counts.attachments,
        "authors": {"mapped": built.mapped, "imported": built.imported},
        "skipped": dict(sorted(counts.skipped.items())),
    }

"""Finding and streaming DiscordChatExporter JSON files. ijson reads them as a stream (a file of several GB
never sits in memory): the header objects first (`guild`, `channel`: the exporter writes them before the
messages), then `messages` one item at a time."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ijson

DM_TYPES = {"DirectTextChat", "DirectGroupTextChat"}
TEXT_TYPES = {"GuildTextChat", "GuildNews"}
THREAD_TYPES = {"GuildPublicThread", "GuildPrivateThread", "GuildNewsThread"}


class DiscordImportError(Exception):
    """A refusal of the command, with its CLI error code (`import.not_found`, `import.unsupported`, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class ExportFile:
    path: Path
    guild: dict[str, Any]
    channel: dict[str, Any]
    # The folder its attachment paths are relative to: where it was given (or found), never where a link
    # to it points, so a link cannot widen what may be read.
    folder: Path


@dataclass(frozen=True)
class Found:
    files: list[tuple[Path, Path]]  # (the JSON file, resolved; its folder as given, resolved)
    roots: list[Path]  # the folders attachments may come from
    outside: int  # JSON files of a folder that are links pointing out of it: skipped


def export_files(paths: list[Path]) -> Found:
    """The JSON files and the folders attachments may come from. A folder gives the JSON files directly in
    it (its media folders hold the files, not exports), except links pointing out of it; a file gives itself
    and the folder it was named in (`given.absolute().parent`: a link named directly is read, but its
    target's folder is not a root)."""
    found: list[tuple[Path, Path]] = []
    roots: list[Path] = []
    outside = 0
    for given in paths:
        if not given.exists():
            raise DiscordImportError("import.not_found", f"{given} does not exist")
        if given.is_dir():
            root = given.resolve()
            roots.append(root)
            for path in sorted(p for p in given.iterdir() if p.suffix.lower() == ".json" and p.is_file()):
                if path.resolve().is_relative_to(root):
                    found.append((path.resolve(), root))
                else:
                    outside += 1
        else:
            root = given.absolute().parent.resolve()
            roots.append(root)
            found.append((given.resolve(), root))
    unique = list(dict((path, (path, folder)) for path, folder in found).values())
    if not unique:
        raise DiscordImportError("import.not_found", "no JSON export found in the given paths")
    return Found(unique, roots, outside)


def _first(path: Path, prefix: str) -> Any:
    with path.open("rb") as handle:
        try:
            return next(ijson.items(handle, prefix, use_float=True), None)
        except ijson.JSONError as err:
            raise DiscordImportError("import.unsupported", f"{path.name} is not JSON: {err}") from None


def read_header(path: Path, folder: Path) -> ExportFile:
    guild, channel = _first(path, "guild"), _first(path, "channel")
    if not isinstance(guild, dict) or not isinstance(channel, dict) or "id" not in guild or "type" not in channel:
        raise DiscordImportError("import.unsupported", f"{path.name} is not a DiscordChatExporter JSON export")
    if channel["type"] in DM_TYPES or str(guild.get("id")) == "0":
        raise DiscordImportError("import.unsupported", f"{path.name} is a direct-message export")
    return ExportFile(path, guild, channel, folder)


def messages(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("rb") as handle:
        try:
            yield from ijson.items(handle, "messages.item", use_float=True)
        except ijson.JSONError as err:
            raise DiscordImportError("import.unsupported", f"{path.name}: malformed JSON: {err}") from None

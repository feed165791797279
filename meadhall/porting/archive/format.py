"""What a `meadhall-guild` archive of version 1 holds (docs/migrating.md, "Between Meadhall instances"): its
member names, and the shapes the import checks before it writes anything."""

from __future__ import annotations

import re

FORMAT = "meadhall-guild"
VERSION = 1
MANIFEST = "manifest.json"
GUILD = "guild.json"
USERS = "users.json"

# Every member an archive may hold; anything else (an absolute path, `..`, another folder) is refused.
# Matched whole (`fullmatch`): with `$`, a name ending in a newline would pass and then fail as an id.
_MEMBER = re.compile(r"(?:manifest\.json|guild\.json|users\.json|messages/[1-9][0-9]{0,18}\.ndjson|"
                     r"files/[1-9][0-9]{0,18})")


class ArchiveError(Exception):
    """A refusal of the archive commands, with the CLI's error code (`export.exists`, `import.corrupt`, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def corrupt(message: str) -> ArchiveError:
    return ArchiveError("import.corrupt", message)


def is_member_name(name: str) -> bool:
    return _MEMBER.fullmatch(name) is not None


def messages_member(room_id: int) -> str:
    return f"messages/{room_id}.ndjson"


def file_member(file_id: int) -> str:
    return f"files/{file_id}"


def member_id(name: str) -> int:
    """The id a `messages/<id>.ndjson` or `files/<id>` member is named by."""
    return int(name.split("/", 1)[1].removesuffix(".ndjson"))

"""Every id of the archive becomes a new one (docs/migrating.md, "Between Meadhall instances"). Snowflakes are
unique across all tables, so one map serves rooms, roles, users, messages, emojis and files alike; the
source guild's id maps to the new guild's, which is also its default role's id, as in every guild."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Callable

# Ids inside message text: `<@user>`, `<#room>` and custom emojis `<:name:id>` (docs/reference: the message
# content rules); reaction keys use the emoji form too.
_TOKEN = re.compile(r"<(@|#|:[A-Za-z0-9_]{2,32}:)([0-9]{1,20})>")


class IdMap:
    def __init__(self, allocate: Callable[[], int]) -> None:
        self._allocate = allocate
        self._map: dict[str, int] = {}
        # The messages of the room being written, as two arrays of 8-byte ids (16 bytes a message rather than a
        # dict entry's hundred): replies point within their room, so these are dropped when the next room
        # starts. Only messages with files stay in `_map`, for the files written after every room.
        self._room = _RoomIds()

    def set(self, old: str, new: int) -> int:
        self._map[old] = new
        return new

    def next_room(self) -> None:
        self._room = _RoomIds()

    def set_message(self, old: str, new: int, *, keep: bool) -> None:
        if keep:
            self._map[old] = new
        else:
            self._room.set(int(old), new)

    def new(self, old: str) -> int:
        """The new id of `old`, made now when it has none yet (also for a reference whose target the source
        no longer had, such as a reply to a deleted message: it stays a reference to nothing)."""
        found = self._map.get(old) or self._room.get(int(old))
        if found is None:
            found = self._map[old] = self._allocate()
        return found

    def maybe(self, old: str | None) -> int | None:
        return None if old is None else self.new(old)

    def known(self, old: str | None) -> int | None:
        """The new id of `old` when it was brought over, else None."""
        return None if old is None else self._map.get(old) or self._room.get(int(old))

    def text(self, content: str) -> str:
        """Content with the ids of its mentions and custom emojis replaced by their new ids; an id that
        names nothing of the archive is left as written."""
        if "<" not in content:
            return content

        def swap(match: re.Match[str]) -> str:
            new = self._map.get(match.group(2))
            return match.group(0) if new is None else f"<{match.group(1)}{new}>"

        return _TOKEN.sub(swap, content)


class _RoomIds:
    """old -> new for one room's messages, which an archive lists in ascending id order: appended to two
    arrays and found by bisection; an id out of order (a hand-made archive) goes to a small dict instead."""

    def __init__(self) -> None:
        self._old = array("q")
        self._new = array("q")
        self._out_of_order: dict[int, int] = {}

    def set(self, old: int, new: int) -> None:
        if not self._old or old > self._old[-1]:
            self._old.append(old)
            self._new.append(new)
        else:
            self._out_of_order[old] = new

    def get(self, old: int) -> int | None:
        i = bisect_left(self._old, old)
        if i < len(self._old) and self._old[i] == old:
            return self._new[i]
        return self._out_of_order.get(old)

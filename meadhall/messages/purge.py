"""Deleting a user's recent messages in a guild, for a ban with `delete_message_seconds` (OpenAPI: banUser;
docs/moderation.md). Each message goes as a single deletion takes it (messages/edit.py): its files, the mention
counts it added for those who have not read past it, the room's last message; the room's message version moves
with the rows (a trigger), so cached history pages are rebuilt. One MESSAGE_DELETE_BULK per room and group of
receivers: the room's viewers get the ids of the public messages, and the two parties of a `private` message
also get its id."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from meadhall.db.uow import UnitOfWork
from meadhall.files.cleanup import drop_files
from meadhall.files.queries import select_file_ids_of_messages
from meadhall.guilds.rooms import queries as room_queries
from meadhall.messages import queries
from meadhall.messages.events import notify_message_delete_bulk
from meadhall.messages.read_states import drop_mentions
from meadhall.messages.rooms import MESSAGE_ROOM_TYPES
from meadhall.messages.rows import MessageRow
from meadhall.realtime.audience import GuildViewers
from meadhall.runtime import Runtime

# Ids are made from each node's own clock (docs/architecture.md: an id starts with its milliseconds); a node
# whose clock runs this far behind still has its messages found.
CLOCK_SKEW_MS = 5 * 60 * 1000


def first_id_since(uow: UnitOfWork, since: datetime) -> int:
    """An id below every id made since `since`: an id made now, moved back by the period (and the skew). The
    period is counted on the id's clock; `created_at`, which the query checks as well, keeps the exact bound."""
    period_ms = int((uow.now - since).total_seconds() * 1000) + CLOCK_SKEW_MS
    return max(0, (uow.next_id() >> 22) - period_ms) << 22


def _receivers(rows: list[MessageRow], viewers: list[int]) -> dict[tuple[int, ...], list[int]]:
    """ids (oldest first) -> who receives exactly those: every viewer the public ones, a party its private ones."""
    public = [int(r["id"]) for r in rows if r["kind"] != "private"]
    private: dict[int, list[int]] = defaultdict(list)
    for r in rows:
        if r["kind"] == "private":
            for party in {r["author_id"], r["recipient_id"]}:
                if party is not None:
                    private[int(party)].append(int(r["id"]))
    groups: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for viewer in viewers:
        ids = tuple(sorted(public + private.get(viewer, [])))
        if ids:
            groups[ids].append(viewer)
    return groups


async def do_purge_author(rt: Runtime, uow: UnitOfWork, guild_id: int, user_id: int, since: datetime) -> int:
    """Delete the user's messages in the guild's rooms written at `since` or later; the number deleted."""
    conn = uow.conn
    rooms = {int(r["id"]): r for r in await room_queries.select_channels(conn, guild_id)
             if r["type"] in MESSAGE_ROOM_TYPES}
    rows = await queries.select_author_messages_since(conn, sorted(rooms), user_id, since, first_id_since(uow, since))
    if not rows:
        return 0
    by_room: dict[int, list[MessageRow]] = defaultdict(list)
    for row in rows:
        by_room[int(row["channel_id"])].append(row)
    # Read after the ban removed the member: the banned user receives none of these events.
    viewers = await GuildViewers.load(conn, guild_id, uow.now)
    for channel_id in sorted(by_room):  # rooms in id order: the lock order of every writer (migration 0010)
        room_rows = by_room[channel_id]
        ids = [int(r["id"]) for r in room_rows]
        await queries.lock_channel(conn, channel_id)
        file_ids = await select_file_ids_of_messages(conn, [int(r["id"]) for r in room_rows if r["has_attachments"]])
        await queries.delete_messages(conn, channel_id, ids)
        await drop_files(uow, rt.files, file_ids)
        for row in room_rows:
            await drop_mentions(uow, row)
        if rooms[channel_id]["last_message_id"] in ids:
            await queries.update_last_message_id(conn, channel_id, await queries.select_newest_public_id(conn, channel_id))
        for shown, receivers in _receivers(room_rows, viewers.viewers(channel_id)).items():
            uow.emit(notify_message_delete_bulk(shown, channel_id, guild_id, receivers))
    return len(rows)

"""The first pass of `meadhall import-guild` (docs/migrating.md, "Between Meadhall instances"): the whole archive
is read and checked before anything is written. Refused with `import.unsupported`: another format or version.
Refused with `import.corrupt`: a member that is not a regular file (links, devices, folders: a tar-slip), a
name outside the archive's layout (absolute, `..`, unknown), a member twice, a member missing or not listed in
the manifest, a digest that differs, JSON of the wrong shape, a reference (author, attachment, role, room, pin)
that resolves to nothing, counts that disagree, and anything over the limits below (a decompression bomb).

Memory holds the small members (manifest, guild, users) and sets of ids; messages are checked a line at a time.
"""

from __future__ import annotations

import hashlib
import tarfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import ValidationError

from meadhall.porting.archive import shapes
from meadhall.porting.archive.format import (
    FORMAT,
    GUILD,
    MANIFEST,
    USERS,
    VERSION,
    ArchiveError,
    corrupt,
    file_member,
    is_member_name,
    member_id,
    messages_member,
)

# Limits against a decompression bomb: a few kilobytes of gzip can expand to terabytes, so nothing read from
# the archive may grow without a bound before it is checked.
SMALL_MEMBER_LIMIT = 64 * 1024 * 1024  # manifest.json, guild.json and users.json are each read whole
# A message is at most 4000 characters (under 24 KiB as escaped JSON) plus its reactions; a longer line is
# not one a Meadhall export writes, and the line is held in memory until its newline.
LINE_LIMIT = 8 * 1024 * 1024
# tarfile parses a header per member; an archive holds rooms + files + 3 members, far below this.
MEMBER_LIMIT = 1_000_000
# pax and GNU long-name headers are read whole by tarfile; the exporter writes plain ustar, so none is needed.
EXTENSION_HEADER_LIMIT = 64 * 1024
# The messages come before users.json and guild.json, so the ids they name are held until those are read. Each
# named user needs an entry of users.json and each pin one of guild.json, at least 48 bytes each within
# SMALL_MEMBER_LIMIT, and each attachment a member: more is refused before it fills the memory.
NAMED_LIMIT = SMALL_MEMBER_LIMIT // 48
_CHUNK = 1024 * 1024
# What a damaged archive raises while it is read (a cut gzip stream, a bad header, a bad checksum).
UNREADABLE = (tarfile.TarError, EOFError, OSError, zlib.error)


@dataclass
class Verified:
    manifest: shapes.Manifest
    guild: shapes.GuildDoc
    users: shapes.UsersDoc
    digests: dict[str, str]
    messages_per_room: dict[int, int]


@dataclass
class _Seen:
    digests: dict[str, str] = field(default_factory=dict)
    small: dict[str, bytes] = field(default_factory=dict)
    messages_per_room: dict[int, int] = field(default_factory=dict)
    user_ids: set[str] = field(default_factory=set)
    attachment_ids: set[str] = field(default_factory=set)
    pinned: set[tuple[str, str]] = field(default_factory=set)
    problem: str | None = None  # the first shape error; reported once the manifest's format is known
    advance: Callable[[int], None] | None = None

    def note(self, problem: str) -> None:
        if self.problem is None:
            self.problem = problem


def open_members(path: Path) -> Iterator[tuple[tarfile.TarInfo, IO[bytes]]]:
    """The archive's members in order, each a regular file with an allowed, unique name, read as a stream."""
    if not path.is_file():
        raise ArchiveError("import.not_found", f"{path} is not a file")
    names: set[str] = set()
    try:
        with tarfile.open(path, mode="r|gz", tarinfo=_BoundedTarInfo) as tar:
            while (info := tar.next()) is not None:
                # tarfile keeps every TarInfo it reads; a stream never needs the earlier ones again.
                tar.members = []  # type: ignore[attr-defined]  # a private list of tarfile
                if len(names) >= MEMBER_LIMIT:
                    raise corrupt(f"the archive holds more than {MEMBER_LIMIT} members")
                if not info.isreg():
                    raise corrupt(f"member {info.name!r} is not a regular file")
                if not is_member_name(info.name):
                    raise corrupt(f"member name {info.name!r} is not part of a meadhall-guild archive")
                if info.name in names:
                    raise corrupt(f"member {info.name!r} appears twice")
                names.add(info.name)
                handle = tar.extractfile(info)
                assert handle is not None  # a regular file always has content
                yield info, handle
    except UNREADABLE as err:
        raise corrupt(f"not a readable gzip-compressed tar archive: {err}") from None


def verify_archive(path: Path, advance: Callable[[int], None] | None = None) -> Verified:
    """`advance` is told how many messages were checked (for a progress bar)."""
    seen = _Seen(advance=advance)
    try:
        for info, handle in open_members(path):
            if info.name in (MANIFEST, GUILD, USERS):
                if info.size > SMALL_MEMBER_LIMIT:
                    raise corrupt(f"{info.name} is too large")
                data = handle.read()
                seen.small[info.name] = data
                seen.digests[info.name] = hashlib.sha256(data).hexdigest()
            elif info.name.startswith("messages/"):
                seen.digests[info.name] = _check_messages(info.name, handle, seen)
            else:
                seen.digests[info.name] = _digest(handle)
    except UNREADABLE as err:
        raise corrupt(f"not a readable gzip-compressed tar archive: {err}") from None
    manifest = _manifest(seen)
    # A changed byte is told as such, before the shape error it may also cause.
    _check_members(manifest, seen)
    if seen.problem is not None:
        raise corrupt(seen.problem)
    guild = _parse(seen, GUILD, shapes.GuildDoc)
    users = _parse(seen, USERS, shapes.UsersDoc)
    _check_references(guild, users, seen)
    _check_counts(manifest, guild, users, seen)
    return Verified(manifest, guild, users, seen.digests, seen.messages_per_room)


def _digest(handle: IO[bytes]) -> str:
    digest = hashlib.sha256()
    while chunk := handle.read(_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def message_lines(handle: IO[bytes], digest: Any) -> Iterator[bytes]:
    """The lines of an ndjson member, hashed as they are read."""
    rest = b""
    while chunk := handle.read(_CHUNK):
        digest.update(chunk)
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        # Checked each chunk, so an unending line costs at most LINE_LIMIT of memory, not quadratic copying.
        if len(rest) > LINE_LIMIT or any(len(line) > LINE_LIMIT for line in lines):
            raise corrupt(f"a line of a messages member is longer than {LINE_LIMIT} bytes")
        yield from lines
    if rest:
        yield rest


class _BoundedTarInfo(tarfile.TarInfo):
    """Refuses an extension header (pax, GNU long name) tarfile would otherwise read whole, however large, and
    sparse members, whose maps tarfile reads into lists of any length (the exporter writes neither)."""

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type in _EXTENSIONS and self.size > EXTENSION_HEADER_LIMIT:
            raise corrupt(f"an extension header of {self.size} bytes")
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise corrupt("a sparse member")
        return super()._proc_member(tarfile_)  # type: ignore[misc]

    def _sparse(self, *args: Any) -> None:
        raise corrupt("a sparse member")

    _proc_gnusparse_00 = _proc_gnusparse_01 = _proc_gnusparse_10 = _sparse


_EXTENSIONS = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
               tarfile.GNUTYPE_LONGLINK)


def parse_message(line: bytes) -> shapes.Message:
    return shapes.Message.model_validate(orjson.loads(line))


def _check_messages(name: str, handle: IO[bytes], seen: _Seen) -> str:
    room = str(member_id(name))
    digest = hashlib.sha256()
    count = 0
    for number, line in enumerate(message_lines(handle, digest), start=1):
        try:
            message = parse_message(line)
        except (orjson.JSONDecodeError, ValidationError) as err:
            seen.note(f"{name} line {number}: {_first(err)}")
            continue
        count += 1
        if seen.advance is not None and count % 1000 == 0:
            seen.advance(1000)
        for user in (message.author_id, message.recipient_id, *message.mentions):
            if user is not None:
                seen.user_ids.add(user)
        if message.system_event is not None:
            seen.user_ids.update(u for u in (message.system_event.user_id, message.system_event.actor_id) if u)
        for reaction in message.reactions:
            seen.user_ids.update(reaction.user_ids)
        seen.attachment_ids.update(message.attachment_ids)
        if message.pinned:
            seen.pinned.add((room, message.id))
        if max(len(seen.user_ids), len(seen.pinned)) > NAMED_LIMIT or len(seen.attachment_ids) > MEMBER_LIMIT:
            raise corrupt(f"{name} names more users, pins or files than an archive can hold")
    seen.messages_per_room[int(room)] = count
    if seen.advance is not None:
        seen.advance(count % 1000)
    return digest.hexdigest()


def _first(err: Exception) -> str:
    if isinstance(err, ValidationError):
        first = err.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return f"not JSON ({err})"


def _manifest(seen: _Seen) -> shapes.Manifest:
    """The format and version decide first: an archive of another kind is `import.unsupported`, whatever
    else it holds; then the manifest's own shape."""
    data = seen.small.get(MANIFEST)
    if data is None:
        raise corrupt("manifest.json is missing")
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise corrupt("manifest.json is not JSON") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or raw.get("version") != VERSION:
        found = (raw.get("format"), raw.get("version")) if isinstance(raw, dict) else None
        raise ArchiveError("import.unsupported", f"not a {FORMAT} archive of version {VERSION} (found {found})")
    try:
        return shapes.Manifest.model_validate(raw)
    except ValidationError as err:
        raise corrupt(f"manifest.json: {_first(err)}") from None


def _parse(seen: _Seen, name: str, shape: Any) -> Any:
    data = seen.small.get(name)
    if data is None:
        raise corrupt(f"{name} is missing")
    try:
        return shape.model_validate(orjson.loads(data))
    except (orjson.JSONDecodeError, ValidationError) as err:
        raise corrupt(f"{name}: {_first(err)}") from None


def _check_members(manifest: shapes.Manifest, seen: _Seen) -> None:
    present = set(seen.digests) - {MANIFEST}
    listed = set(manifest.sha256)
    if missing := sorted(listed - present):
        raise corrupt(f"member {missing[0]!r} is listed in the manifest but missing")
    if extra := sorted(present - listed):
        raise corrupt(f"member {extra[0]!r} is not listed in the manifest")
    for name in sorted(listed):
        if manifest.sha256[name] != seen.digests[name]:
            raise corrupt(f"member {name!r} does not match its sha256 digest")


def _check_references(guild: shapes.GuildDoc, users: shapes.UsersDoc, seen: _Seen) -> None:
    user_ids = {u.id for u in users.users}
    if len(user_ids) != len(users.users):
        raise corrupt("users.json lists a user twice")
    rooms = {r.id for r in guild.rooms}
    groups = {c.id for c in guild.categories}
    roles = {r.id for r in guild.roles}
    files = {f.id: f for f in guild.files}
    if len(files) != len(guild.files) or len(roles) != len(guild.roles) or len(rooms | groups) != len(
            guild.rooms) + len(guild.categories):
        raise corrupt("guild.json lists an id twice")
    if {messages_member(int(r)) for r in rooms} != {n for n in seen.digests if n.startswith("messages/")}:
        raise corrupt("the messages members do not match the rooms of guild.json")
    if {file_member(int(f)) for f in files} != {n for n in seen.digests if n.startswith("files/")}:
        raise corrupt("the files members do not match the files of guild.json")
    for stored in guild.files:
        if seen.digests[file_member(int(stored.id))] != stored.sha256:
            raise corrupt(f"file {stored.id} does not match its sha256 digest")
    named_users = set(seen.user_ids) | _guild_users(guild)
    if unknown := sorted(named_users - user_ids):
        raise corrupt(f"user {unknown[0]} is named but not in users.json")
    named_files = seen.attachment_ids | _guild_files(guild) | {u.avatar_file_id for u in users.users if u.avatar_file_id}
    if unknown := sorted(named_files - files.keys()):
        raise corrupt(f"file {unknown[0]} is named but not in the archive")
    for member in guild.members:
        if set(member.role_ids) - roles:
            raise corrupt(f"member {member.user_id} holds a role not in guild.json")
    for room in guild.categories + guild.rooms:
        if room.parent_id is not None and room.parent_id not in groups:
            raise corrupt(f"room {room.id} is in a category not in guild.json")
        for override in room.overrides:
            if override.kind == "role" and override.target_id not in roles:
                raise corrupt(f"room {room.id} has an override for a role not in guild.json")
    if any(h.room_id not in rooms for h in guild.webhooks):
        raise corrupt("a webhook is in a room not in guild.json")
    if {(p.room_id, p.message_id) for p in guild.pins} != seen.pinned:
        raise corrupt("the pins of guild.json do not match the pinned messages")
    if guild.guild.id not in roles:
        raise corrupt("guild.json has no default role")


def _guild_users(guild: shapes.GuildDoc) -> set[str]:
    found = {guild.guild.owner_id}
    found.update(m.user_id for m in guild.members)
    found.update(b.user_id for b in guild.bans)
    found.update(b.author_id for b in guild.bans if b.author_id)
    found.update(o.target_id for r in guild.categories + guild.rooms for o in r.overrides if o.kind == "member")
    found.update(f.uploader_id for f in guild.files if f.uploader_id)
    for items in (guild.emojis, guild.sounds, guild.webhooks):
        found.update(i.creator_id for i in items if i.creator_id)
    return found


def _guild_files(guild: shapes.GuildDoc) -> set[str]:
    info = guild.guild
    found = {f for f in (info.icon_file_id, info.banner_file_id, info.splash_file_id) if f}
    found.update(r.background_file_id for r in guild.categories + guild.rooms if r.background_file_id)
    found.update(h.avatar_file_id for h in guild.webhooks if h.avatar_file_id)
    found.update(e.file_id for e in guild.emojis)
    found.update(s.file_id for s in guild.sounds)
    found.update(c.file_id for c in guild.cosmetics)
    return found


def _check_counts(manifest: shapes.Manifest, guild: shapes.GuildDoc, users: shapes.UsersDoc, seen: _Seen) -> None:
    counts = manifest.counts
    actual = (len(guild.rooms), sum(seen.messages_per_room.values()), len(guild.files), len(users.users))
    if (counts.rooms, counts.messages, counts.files, counts.users) != actual:
        raise corrupt(f"the manifest's counts {counts.model_dump()} do not match the archive {actual}")

"""`meadhall import-guild` refuses what it cannot trust and leaves nothing behind (3.21; docs/migrating.md,
"Between Meadhall instances"): a changed byte, a missing or extra member, a `../` or absolute name, a link or a
device, another format or version, JSON that is not JSON or not of its shape, all refused before anything is
written; an import that fails part-way (a full disk, a constraint) leaves no guild, no imported author, no row
and no stored file."""

from __future__ import annotations

import errno
import gzip
import hashlib
import io
import json
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from meadhall.db.schema import channels, files, guilds, messages, users
from meadhall.filestore import LocalFileStore
from tests.support.factories import add_member
from tests.support.files import attached
from tests.support.guilds import make_guild
from tests.support.http import Api
from tests.support.messages import post


@dataclass
class Exported:
    path: Path
    heir: Any
    members: list[tuple[tarfile.TarInfo, bytes]]

    def member(self, prefix: str) -> str:
        return next(info.name for info, _ in self.members if info.name.startswith(prefix))


@pytest.fixture
async def exported(client, accounts, rt, meadhall, tmp_path) -> Exported:
    owner = await accounts.register("owner")
    bob = await accounts.register("bob")
    guild = await make_guild(client, owner, "Hall")
    await add_member(rt, guild["id"], bob)
    room = guild["system_channel_id"]
    for i in range(3):
        note = await attached(client, bob, room, f"note {i}".encode() * 100, f"note{i}.txt")
        await post(client, bob, room, f"message {i}", attachment_ids=[note["id"]])
    path = tmp_path / "exports" / "hall.tar.gz"
    path.parent.mkdir()
    (await meadhall("export-guild", "--guild", guild["id"], "--out", str(path))).json
    with tarfile.open(path, "r:gz") as tar:
        members = [(info, tar.extractfile(info).read()) for info in tar.getmembers()]  # type: ignore[union-attr]
    heir = await accounts.register("heir")
    return Exported(path, heir, members)


async def snapshot(rt: Any, settings: Any) -> dict[str, Any]:
    """What an import would add to: rows of every kind it writes, and the content files on disk."""
    async with rt.engine.connect() as conn:
        counts = {t.name: (await conn.execute(select(func.count()).select_from(t))).scalar_one()
                  for t in (guilds, channels, messages, users, files)}
    root = settings.DATA_DIR / "files"
    counts["stored"] = sorted(p.name for p in root.rglob("*") if p.is_file()) if root.exists() else []
    return counts


def rewrite(exported: Exported, out: Path, change: Callable[[list[tuple[tarfile.TarInfo, bytes]]], None],
            *, manifest: Callable[[dict[str, Any]], None] | None = None, digests: bool = False) -> Path:
    """A copy of the archive with `change` applied to its members; `digests` lists the changed members'
    digests in the manifest anew (so only the shape is wrong), `manifest` edits the manifest itself."""
    members = [(info, data) for info, data in exported.members]
    change(members)
    if digests or manifest is not None:
        index = next(i for i, (info, _) in enumerate(members) if info.name == "manifest.json")
        body = json.loads(members[index][1])
        if digests:
            body["sha256"] = {info.name: hashlib.sha256(data).hexdigest() for info, data in members
                              if info.isreg() and info.name != "manifest.json"}
        if manifest is not None:
            manifest(body)
        members[index] = (members[index][0], json.dumps(body).encode())
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info, data in members:
            copy = tarfile.TarInfo(info.name)
            copy.type, copy.linkname, copy.mode = info.type, info.linkname, info.mode
            copy.size = len(data) if info.isreg() else 0
            tar.addfile(copy, io.BytesIO(data) if info.isreg() else None)
    out.write_bytes(gzip.compress(buffer.getvalue()))
    return out


def flip(name_prefix: str) -> Callable[[list[tuple[tarfile.TarInfo, bytes]]], None]:
    def change(members: list[tuple[tarfile.TarInfo, bytes]]) -> None:
        i = next(i for i, (info, _) in enumerate(members) if info.name.startswith(name_prefix))
        info, data = members[i]
        middle = len(data) // 2
        members[i] = (info, data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1:])
    return change


def drop(name: str) -> Callable[[list[tuple[tarfile.TarInfo, bytes]]], None]:
    def change(members: list[tuple[tarfile.TarInfo, bytes]]) -> None:
        kept = [m for m in members if m[0].name != name]
        assert len(kept) == len(members) - 1
        members[:] = kept
    return change


def add(name: str, data: bytes = b"extra", kind: bytes = tarfile.REGTYPE, link: str = ""
        ) -> Callable[[list[tuple[tarfile.TarInfo, bytes]]], None]:
    def change(members: list[tuple[tarfile.TarInfo, bytes]]) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.linkname = kind, link
        members.insert(0, (info, data))
    return change


def replace(name: str, data: bytes) -> Callable[[list[tuple[tarfile.TarInfo, bytes]]], None]:
    def change(members: list[tuple[tarfile.TarInfo, bytes]]) -> None:
        members[:] = [(info, data if info.name == name else old) for info, old in members]
    return change


def unchanged(members: list[tuple[tarfile.TarInfo, bytes]]) -> None:
    return None


async def refused(meadhall: Any, rt: Any, settings: Any, exported: Exported, archive: Path, code: str,
                  words: str = "") -> None:
    before = await snapshot(rt, settings)
    ran = await meadhall("import-guild", str(archive), "--owner-email", "heir@example.com")
    assert ran.error["code"] == code, ran.stderr
    assert words.lower() in ran.error["message"].lower(), ran.error["message"]
    assert await snapshot(rt, settings) == before, "nothing was written"


@pytest.mark.parametrize("case", [
    "changed message byte", "changed file byte", "missing file", "missing room", "extra member",
    "parent member name", "absolute member name", "symlink member", "hard link member", "device member",
    "folder member", "member twice"])
async def test_a_tampered_archive_is_refused_before_anything_is_written(meadhall, rt, settings, exported, tmp_path,
                                                                         case):
    a_file, a_room = exported.member("files/"), exported.member("messages/")
    change, words = {
        "changed message byte": (flip("messages/"), "sha256"),
        "changed file byte": (flip("files/"), "sha256"),
        "missing file": (drop(a_file), "missing"),
        "missing room": (drop(a_room), "missing"),
        "extra member": (add("files/123456789"), "not listed"),
        "parent member name": (add("../escaped.txt"), "not part of"),
        "absolute member name": (add("/tmp/escaped.txt"), "not part of"),
        "symlink member": (add(a_file, b"", tarfile.SYMTYPE, "/etc/passwd"), "not a regular file"),
        "hard link member": (add("files/42", b"", tarfile.LNKTYPE, a_file), "not a regular file"),
        "device member": (add("files/43", b"", tarfile.CHRTYPE), "not a regular file"),
        "folder member": (add("files", b"", tarfile.DIRTYPE), "not a regular file"),
        "member twice": (add(a_file, b"other"), "twice"),
    }[case]
    archive = rewrite(exported, tmp_path / "tampered.tar.gz", change)
    await refused(meadhall, rt, settings, exported, archive, "import.corrupt", words)
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path.parent / "escaped.txt").exists()


@pytest.mark.parametrize(("edit", "code"), [
    (lambda m: m.update(format="slack-export"), "import.unsupported"),
    (lambda m: m.update(version=2), "import.unsupported"),
    (lambda m: m.pop("format"), "import.unsupported"),
    (lambda m: m.update(counts={**m["counts"], "messages": m["counts"]["messages"] + 1}), "import.corrupt"),
    (lambda m: m.pop("sha256"), "import.corrupt"),
])
async def test_another_format_or_version_is_unsupported(meadhall, rt, settings, exported, tmp_path, edit, code):
    archive = rewrite(exported, tmp_path / "other.tar.gz", unchanged, manifest=edit)
    await refused(meadhall, rt, settings, exported, archive, code)


@pytest.mark.parametrize(("member", "body", "words"), [
    ("guild.json", b"{not json", "guild.json"),
    ("users.json", b'{"users": [{"id": "1", "username": "x", "display_name": "x", "avatar_file_id": null, '
                   b'"bio": "", "email": "x@example.com"}]}', "users.json"),
    ("manifest.json", b"\x00\x01 not json", "manifest.json"),
    ("messages/", b'{"id": "1"}\n', "line 1"),
    ("messages/", b"not json at all\n", "not json"),
])
async def test_json_of_the_wrong_shape_is_corrupt(meadhall, rt, settings, exported, tmp_path, member, body, words):
    name = exported.member(member)
    archive = rewrite(exported, tmp_path / "shape.tar.gz", replace(name, body), digests=member != "manifest.json")
    await refused(meadhall, rt, settings, exported, archive, "import.corrupt", words)


async def test_what_is_not_an_archive_is_refused(meadhall, rt, settings, exported, tmp_path):
    plain = tmp_path / "plain.tar.gz"
    plain.write_bytes(b"just some bytes")
    await refused(meadhall, rt, settings, exported, plain, "import.corrupt")
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(exported.path.read_bytes()[: exported.path.stat().st_size // 2])
    await refused(meadhall, rt, settings, exported, cut, "import.corrupt")
    await refused(meadhall, rt, settings, exported, tmp_path / "absent.tar.gz", "import.not_found")
    ran = await meadhall("import-guild", str(exported.path), "--owner-email", "nobody@example.com")
    assert ran.error["code"] == "user.not_found"


async def test_the_untouched_archive_imports(meadhall, rt, settings, exported, client):
    """The refusals above are of the changes alone: the same archive, untouched and rewritten, imports."""
    result = (await meadhall("import-guild", str(exported.path), "--owner-email", "heir@example.com")).json
    assert result["messages"] >= 3 and result["files"] == 3
    guilds_of_heir = (await Api(client).get("/users/@me/guilds", exported.heir))["guilds"]
    assert [g["id"] for g in guilds_of_heir] == [result["guild_id"]]


@pytest.fixture
def small_batches(monkeypatch: Any) -> None:
    """A commit every two messages, so that a failure comes after committed batches, which must be undone."""
    from meadhall.porting.archive import history

    monkeypatch.setattr(history, "COMMIT_EVERY", 2)


async def test_a_full_disk_part_way_leaves_nothing_behind(meadhall, rt, settings, exported, client, monkeypatch,
                                                           small_batches):
    before = await snapshot(rt, settings)
    put = LocalFileStore.put
    calls = 0

    async def fills_up(self: LocalFileStore, file_id: int, spool: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:  # after the messages and two files were written
            spool.discard()
            raise OSError(errno.ENOSPC, "No space left on device")
        await put(self, file_id, spool)

    monkeypatch.setattr(LocalFileStore, "put", fills_up)
    ran = await meadhall("import-guild", str(exported.path), "--owner-email", "heir@example.com")
    assert ran.error["code"] == "internal.error" and "No space left" in ran.error["message"] and calls == 3
    assert await snapshot(rt, settings) == before
    assert (await Api(client).get("/users/@me/guilds", exported.heir))["guilds"] == []


async def test_a_constraint_failing_at_the_end_leaves_nothing_behind(meadhall, rt, settings, exported, client,
                                                                     monkeypatch, small_batches):
    from meadhall.porting.archive import history

    before = await snapshot(rt, settings)
    real = history._file_row
    made: list[int] = []

    def same_id(*args: Any) -> dict[str, Any]:
        row = real(*args)
        made.append(row["id"])
        return {**row, "id": made[0]}  # every file row takes the first one's key: the database refuses it

    monkeypatch.setattr(history, "_file_row", same_id)
    ran = await meadhall("import-guild", str(exported.path), "--owner-email", "heir@example.com")
    assert ran.error["code"] == "internal.error" and "IntegrityError" in ran.error["message"]
    assert await snapshot(rt, settings) == before
    assert (await Api(client).get("/users/@me/guilds", exported.heir))["guilds"] == []


# Decompression bombs: a few kilobytes of gzip that would expand without a bound are refused as soon as a limit
# is passed, before anything is written.

@pytest.mark.parametrize(("member", "body", "words"), [
    ("messages/", b"a" * (9 * 1024 * 1024), "longer than"),  # one line, no newline
    ("guild.json", b" " * (64 * 1024 * 1024 + 1), "too large"),
    ("users.json", b" " * (64 * 1024 * 1024 + 1), "too large"),
    ("manifest.json", b" " * (64 * 1024 * 1024 + 1), "too large"),
])
async def test_a_member_too_large_to_hold_is_refused(meadhall, rt, settings, exported, tmp_path, member, body, words):
    archive = rewrite(exported, tmp_path / "bomb.tar.gz", replace(exported.member(member), body))
    assert archive.stat().st_size < 512 * 1024
    await refused(meadhall, rt, settings, exported, archive, "import.corrupt", words)


async def test_too_many_members_are_refused(meadhall, rt, settings, exported, tmp_path, monkeypatch):
    """The limit is far above a real archive's members; lowered here rather than writing a million headers."""
    from meadhall.porting.archive import verify

    monkeypatch.setattr(verify, "MEMBER_LIMIT", len(exported.members) - 1)
    await refused(meadhall, rt, settings, exported, exported.path, "import.corrupt", "more than")


async def test_a_large_extension_header_is_refused(meadhall, rt, settings, exported, tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("guild.json")
        info.pax_headers = {"comment": "x" * (1024 * 1024)}
        tar.addfile(info, io.BytesIO(b""))
    archive = tmp_path / "pax.tar.gz"
    archive.write_bytes(gzip.compress(buffer.getvalue()))
    await refused(meadhall, rt, settings, exported, archive, "import.corrupt", "extension header")


async def test_a_member_name_ending_in_a_newline_is_refused(meadhall, rt, settings, exported, tmp_path):
    name = exported.member("messages/") + "\n"
    archive = rewrite(exported, tmp_path / "newline.tar.gz", add(name, b""), digests=True)
    await refused(meadhall, rt, settings, exported, archive, "import.corrupt", "not part of")


@pytest.mark.parametrize(("change", "words"), [
    (add("files/123456789"), "appeared"),
    (lambda members: drop(next(i.name for i, _ in members if i.name.startswith("files/")))(members), "disappeared"),
])
async def test_an_archive_changed_between_the_passes_is_refused(meadhall, rt, settings, exported, tmp_path,
                                                                  monkeypatch, change, words):
    """The archive is swapped once the first pass has verified it: the second pass finds a member it did not
    verify, or misses one it did."""
    from meadhall.porting.archive import restore

    checked = restore.verify_archive
    swapped = rewrite(exported, tmp_path / "swapped.tar.gz", change)  # the manifest as it was

    def verify_then_swap(path: Path, advance: Any = None) -> Any:
        verified = checked(path, advance)
        path.write_bytes(swapped.read_bytes())
        return verified

    monkeypatch.setattr(restore, "verify_archive", verify_then_swap)
    archive = tmp_path / "original.tar.gz"
    archive.write_bytes(exported.path.read_bytes())
    await refused(meadhall, rt, settings, exported, archive, "import.corrupt", words)


async def test_messages_naming_more_than_an_archive_can_hold_are_refused(meadhall, rt, settings, exported,
                                                                          monkeypatch):
    """Named ids are held until users.json is read; the limit (what 64 MiB of users.json could list) is lowered
    here to what this archive names less one."""
    from meadhall.porting.archive import verify

    monkeypatch.setattr(verify, "NAMED_LIMIT", 0)
    await refused(meadhall, rt, settings, exported, exported.path, "import.corrupt", "names more users")


@pytest.mark.parametrize("sparse", [
    {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": "guild.json",
     "GNU.sparse.realsize": "10"},
    {"GNU.sparse.size": "10", "GNU.sparse.numblocks": "1", "GNU.sparse.offset": "0", "GNU.sparse.numbytes": "10"},
    {"GNU.sparse.map": "0,10", "GNU.sparse.size": "10"},
])
async def test_a_sparse_member_is_refused(meadhall, rt, settings, exported, tmp_path, sparse):
    """tarfile reads a sparse member's map into a list of any length; the exporter never writes one."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("guild.json")
        info.pax_headers = sparse
        info.size = 512
        tar.addfile(info, io.BytesIO(b"1\n0\n10\n".ljust(512, b"\0")))
    archive = tmp_path / "sparse.tar.gz"
    archive.write_bytes(gzip.compress(buffer.getvalue()))
    await refused(meadhall, rt, settings, exported, archive, "import.corrupt", "sparse")

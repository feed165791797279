"""Where file content lives: a small storage interface and its local-disk implementation.

Content is named by the file id, never by the uploaded name. An upload is first written to a *spool*
(a private temporary file on local disk, hashed while it is written) so that it can be checked before it
is kept; `put` then moves it into place. A shared volume works as it is (every node sees `DATA_DIR/files`);
an object store would implement `FileStore` with the same spool and upload in `put`.

Disk work runs on worker threads so that a slow volume never stalls the event loop; no method holds more
than one buffer (`SPOOL_BUFFER` or `READ_CHUNK`) of a file in memory.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

READ_CHUNK = 256 * 1024
SPOOL_BUFFER = 1024 * 1024
SPOOL_SUFFIX = ".part"


class Spool:
    """A private temporary file that counts and hashes what is written to it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.size = 0
        self._hash = hashlib.sha256()
        self._buffer = bytearray()
        # O_EXCL and 0600: the spool is never shared with another request or another user.
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    async def write(self, data: bytes) -> None:
        self.size += len(data)
        self._buffer += data
        if len(self._buffer) >= SPOOL_BUFFER:
            await self._flush()

    async def _flush(self) -> None:
        if not self._buffer:
            return
        chunk, self._buffer = bytes(self._buffer), bytearray()
        await asyncio.to_thread(self._write_sync, chunk)

    def _write_sync(self, chunk: bytes) -> None:
        assert self._fd is not None
        self._hash.update(chunk)
        view = memoryview(chunk)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    async def finish(self) -> None:
        """Everything on disk (fsync): the spool can now be checked and kept."""
        await self._flush()
        if self._fd is not None:
            fd, self._fd = self._fd, None
            await asyncio.to_thread(_sync_and_close, fd)

    def discard(self) -> None:
        """Drop the spool. Synchronous (an unlink), so it also runs while a request is being cancelled."""
        self._buffer = bytearray()
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)
        _unlink(self.path)


def _sync_and_close(fd: int) -> None:
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


@dataclass(frozen=True)
class StoredContent:
    """Content found on the storage, for maintenance (content without a database row)."""

    file_id: int | None  # None for a spool left by an interrupted upload
    path: str
    size: int
    modified: float  # epoch seconds


class ContentReader(Protocol):
    def __aiter__(self) -> AsyncIterator[bytes]: ...

    async def close(self) -> None: ...


class FileStore(Protocol):
    async def new_spool(self) -> Spool: ...

    async def put(self, file_id: int, spool: Spool) -> None: ...

    async def open(self, file_id: int) -> ContentReader:
        """Raises FileNotFoundError when the content is missing."""
        ...

    async def delete(self, file_id: int) -> None: ...

    async def exists(self, file_id: int) -> bool: ...

    async def scan(self) -> list[StoredContent]: ...

    async def remove(self, content: StoredContent) -> None:
        """Remove content found by `scan` (a stale spool, or content without a row)."""
        ...


class _LocalReader:
    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            while True:
                chunk = await asyncio.to_thread(self._handle.read, READ_CHUNK)
                if not chunk:
                    return
                yield chunk
        finally:
            await self.close()

    async def close(self) -> None:
        self._handle.close()


class LocalFileStore:
    """`<root>/<id % 256 as two hex digits>/<id>`; spools in `<root>/tmp/` (same volume: `put` is a rename)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.spool_dir = root / "tmp"

    def path_of(self, file_id: int) -> Path:
        return self.root / f"{file_id % 256:02x}" / str(file_id)

    async def new_spool(self) -> Spool:
        def make() -> Spool:
            self.spool_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            return Spool(self.spool_dir / f"{uuid.uuid4().hex}{SPOOL_SUFFIX}")

        return await asyncio.to_thread(make)

    async def put(self, file_id: int, spool: Spool) -> None:
        await spool.finish()
        target = self.path_of(file_id)

        def move() -> None:
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.replace(spool.path, target)

        await asyncio.to_thread(move)

    async def open(self, file_id: int) -> ContentReader:
        handle = await asyncio.to_thread(open, self.path_of(file_id), "rb")
        return _LocalReader(handle)

    async def delete(self, file_id: int) -> None:
        await asyncio.to_thread(_unlink, self.path_of(file_id))

    async def exists(self, file_id: int) -> bool:
        return await asyncio.to_thread(self.path_of(file_id).is_file)

    async def scan(self) -> list[StoredContent]:
        return await asyncio.to_thread(self._scan)

    def _scan(self) -> list[StoredContent]:
        found: list[StoredContent] = []
        if not self.root.is_dir():
            return found
        for entry in os.scandir(self.root):
            if not entry.is_dir(follow_symlinks=False):
                continue
            for item in os.scandir(entry.path):
                if not item.is_file(follow_symlinks=False):
                    continue
                stat = item.stat(follow_symlinks=False)
                if entry.name == "tmp":
                    if item.name.endswith(SPOOL_SUFFIX):
                        found.append(StoredContent(None, item.path, stat.st_size, stat.st_mtime))
                elif item.name.isdigit():
                    found.append(StoredContent(int(item.name), item.path, stat.st_size, stat.st_mtime))
        return found

    async def remove(self, content: StoredContent) -> None:
        await asyncio.to_thread(_unlink, Path(content.path))

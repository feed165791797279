"""A gzip-compressed tar written member by member from async streams, hashing each member as it goes.

The standard `tarfile` wants a readable file object for each member's content; the exporter's content comes
from the database and the file store as async streams of known size, so the headers come from `tarfile` and
the blocks are written here (headers, content, padding to 512 bytes, two empty blocks at the end). The
archive is written to a private temporary file beside its destination and linked into place at the end: a
reader never sees half an archive, and an existing destination is never replaced."""

from __future__ import annotations

import gzip
import hashlib
import os
import tarfile
import uuid
from collections.abc import AsyncIterable
from pathlib import Path
from typing import IO

from meadhall.porting.archive.format import ArchiveError

_BLOCK = tarfile.BLOCKSIZE
_RECORD = tarfile.RECORDSIZE


class ArchiveWriter:
    def __init__(self, final: Path, mtime: float) -> None:
        if final.exists() or final.is_symlink():
            raise ArchiveError("export.exists", f"{final} exists; choose a new path")
        self.final = final
        self.mtime = mtime
        self.digests: dict[str, str] = {}
        self.temporary = final.parent / f".{final.name}.{uuid.uuid4().hex}.part"
        # O_EXCL and 0600: the archive holds a community's history and is for the operator alone.
        fd = os.open(self.temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self._raw: IO[bytes] = os.fdopen(fd, "wb")
        self._gz = gzip.GzipFile(fileobj=self._raw, mode="wb", compresslevel=6, mtime=int(mtime))
        self._written = 0

    def _header(self, name: str, size: int) -> None:
        info = tarfile.TarInfo(name)
        info.size = size
        info.mode = 0o600
        info.mtime = int(self.mtime)
        info.type = tarfile.REGTYPE
        self._put(info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict"))

    def _put(self, data: bytes) -> None:
        self._gz.write(data)
        self._written += len(data)

    def _pad(self, size: int) -> None:
        if size % _BLOCK:
            self._put(b"\0" * (_BLOCK - size % _BLOCK))

    def add_bytes(self, name: str, data: bytes) -> None:
        self._header(name, len(data))
        self._put(data)
        self._pad(len(data))
        self.digests[name] = hashlib.sha256(data).hexdigest()

    async def add_stream(self, name: str, size: int, chunks: AsyncIterable[bytes]) -> None:
        """A member of `size` bytes; content of another length fails the export (the tar header is written)."""
        self._header(name, size)
        digest = hashlib.sha256()
        seen = 0
        async for chunk in chunks:
            seen += len(chunk)
            if seen > size:
                break
            digest.update(chunk)
            self._put(chunk)
        if seen != size:
            raise ArchiveError("internal.error", f"{name}: the stored content is not {size} bytes long")
        self._pad(size)
        self.digests[name] = digest.hexdigest()

    def add_spooled(self, name: str, spool: IO[bytes]) -> None:
        """A member whose content was spooled to a temporary file (its size is known only at the end)."""
        size = spool.seek(0, os.SEEK_END)
        spool.seek(0)
        self._header(name, size)
        digest = hashlib.sha256()
        while chunk := spool.read(1024 * 1024):
            digest.update(chunk)
            self._put(chunk)
        self._pad(size)
        self.digests[name] = digest.hexdigest()

    def finish(self) -> int:
        """End the archive, put it in place (never over an existing file) and return its size in bytes."""
        self._put(b"\0" * (2 * _BLOCK))
        if self._written % _RECORD:
            self._put(b"\0" * (_RECORD - self._written % _RECORD))
        self._gz.close()
        self._raw.flush()
        os.fsync(self._raw.fileno())
        self._raw.close()
        try:
            _place(self.temporary, self.final)
        finally:
            self.temporary.unlink(missing_ok=True)
        return self.final.stat().st_size

    def discard(self) -> None:
        if not self._raw.closed:
            self._gz.close()
            self._raw.close()
        self.temporary.unlink(missing_ok=True)


def _place(temporary: Path, final: Path) -> None:
    """A hard link never replaces an existing file; a file system without hard links gets a rename after a
    last look."""
    try:
        os.link(temporary, final)
    except FileExistsError:
        raise ArchiveError("export.exists", f"{final} appeared during the export; nothing replaced") from None
    except OSError:
        if final.exists() or final.is_symlink():
            raise ArchiveError("export.exists", f"{final} appeared during the export; nothing replaced") from None
        os.rename(temporary, final)

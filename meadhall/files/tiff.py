"""Photo metadata out of a TIFF without decoding it (docs/files.md, "Photo metadata").

A TIFF is a chain of image file directories (IFDs), each a list of tags whose values sit in the entry or
elsewhere in the file. Every directory keeps only the tags needed to show its pixels (`KEPT`) and is
rewritten in place without the others. Then every byte the kept directories do not use (their values, their
strips and tiles) is overwritten with zeros: the EXIF, GPS and interoperability directories, XMP, IPTC,
descriptions, and whatever else a writer left in the file, referenced or not. Pixel data is copied as it
is, so the stored file has the size of the upload. Classic TIFF and BigTIFF, either byte order; sub-images
(SubIFDs: previews, reduced resolutions) are cleaned like the pages.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import BinaryIO

from meadhall.files.images import ImageRejected

# Literal bytes, or a (start, end) range copied from the source (as in files/metadata.py).
Piece = bytes | tuple[int, int]

ORIENTATION = 0x0112
SUB_IFDS = 0x014A
# The tags of the image data: size, layout, compression, colour (ICC profile included), strips and tiles.
# Descriptions, camera make and model, dates, software, artist, copyright, XMP, IPTC, Photoshop blocks and
# the EXIF and GPS directories are all outside it.
KEPT = frozenset({
    254, 255, 256, 257, 258, 259, 262, 263, 266, 273, 277, 278, 279, 280, 281, 282, 283, 284, 286, 287,
    290, 291, 292, 293, 296, 317, 318, 319, 320, 321, 322, 323, 324, 325, 332, 338, 339, 340, 341, 347,
    512, 513, 514, 515, 517, 518, 519, 520, 521, 529, 530, 531, 532, 34675,
})
# (offsets, byte counts) of the pixel data: strips, tiles, an old-style JPEG stream.
DATA = ((273, 279), (324, 325), (513, 514))
_TYPE_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4, 16: 8, 17: 8,
               18: 8}
_MAX_DIRECTORIES = 1024
_NUMBER_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}
_ZEROS = 1024 * 1024


@dataclass(frozen=True)
class _Entry:
    tag: int
    kind: int
    count: int
    raw: bytes  # the whole entry as stored
    value_at: int  # where the value field of the entry starts in the file


@dataclass
class _Tiff:
    fh: BinaryIO
    size: int
    order: str
    big: bool
    patches: list[tuple[int, bytes]] = field(default_factory=list)  # rewritten directories
    used: list[tuple[int, int]] = field(default_factory=list)  # byte ranges the kept image needs
    seen: set[int] = field(default_factory=set)

    @property
    def word(self) -> str:
        """struct code of an offset, a count of entries and an entry's value field."""
        return "Q" if self.big else "I"

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or offset + length > self.size:
            raise ImageRejected("the TIFF stream is damaged")
        self.fh.seek(offset)
        return self.fh.read(length)

    def unpack(self, code: str, offset: int) -> tuple[int, ...]:
        fmt = self.order + code
        return struct.unpack(fmt, self.read(offset, struct.calcsize(fmt)))

    def entries(self, offset: int) -> tuple[list[_Entry], int, int]:
        """A directory's entries, the offset of the next directory and the directory's length in bytes."""
        if offset in self.seen or len(self.seen) >= _MAX_DIRECTORIES:
            raise ImageRejected("the TIFF stream is damaged")
        self.seen.add(offset)
        count_size, entry_size, value_size = (8, 20, 8) if self.big else (2, 12, 4)
        (count,) = self.unpack("Q" if self.big else "H", offset)
        found = []
        for i in range(count):
            at = offset + count_size + i * entry_size
            raw = self.read(at, entry_size)
            tag, kind = struct.unpack(self.order + "HH", raw[:4])
            (n,) = struct.unpack(self.order + self.word, raw[4:4 + value_size])
            found.append(_Entry(tag, kind, n, raw, at + 4 + value_size))
        end = offset + count_size + count * entry_size
        (next_offset,) = self.unpack(self.word, end)
        return found, next_offset, end + value_size - offset

    def value_span(self, entry: _Entry) -> tuple[int, int] | None:
        """Where an entry's value lies outside the entry, or None when it fits in the entry."""
        length = _TYPE_SIZES.get(entry.kind, 1) * entry.count
        if length <= (8 if self.big else 4):
            return None
        (start,) = self.unpack(self.word, entry.value_at)
        return start, min(start + length, self.size)

    def numbers(self, entry: _Entry) -> list[int]:
        """The unsigned numbers an entry holds (offsets, byte counts)."""
        width = _TYPE_SIZES.get(entry.kind, 1)
        code = _NUMBER_CODES.get(width)
        if code is None or entry.count > 1 << 24:
            raise ImageRejected("the TIFF stream is damaged")
        span = self.value_span(entry)
        start = span[0] if span else entry.value_at
        return list(self.unpack(f"{entry.count}{code}", start))


def plan_tiff(fh: BinaryIO, keep_orientation: bool) -> tuple[list[Piece], bool]:
    """The pieces of the file without metadata, and whether anything was left out."""
    fh.seek(0, 2)
    tiff = _Tiff(fh, fh.tell(), "<", False)
    head = tiff.read(0, 4)
    if head[:2] not in (b"II", b"MM"):
        raise ImageRejected("the TIFF stream is damaged")
    tiff.order = "<" if head[:2] == b"II" else ">"
    (version,) = tiff.unpack("H", 2)
    tiff.big = version == 43
    offset = tiff.unpack("Q", 8)[0] if tiff.big else tiff.unpack("I", 4)[0]
    tiff.used.append((0, 16 if tiff.big else 8))
    while offset:
        offset = _clean(tiff, offset, keep_orientation)
    pieces = _pieces(tiff)
    unchanged = len(pieces) == 1 and pieces[0] == (0, tiff.size)
    return pieces, not unchanged


def _clean(tiff: _Tiff, offset: int, keep_orientation: bool) -> int:
    """Rewrite one directory of the image with its kept tags only, noting the bytes they use; the next
    directory's offset."""
    entries, next_offset, length = tiff.entries(offset)
    tiff.used.append((offset, offset + length))
    kept = [e for e in entries if e.tag in KEPT or e.tag == SUB_IFDS
            or (e.tag == ORIENTATION and keep_orientation)]
    by_tag = {e.tag: e for e in kept}
    for entry in kept:
        span = tiff.value_span(entry)
        if span:
            tiff.used.append(span)
        if entry.tag == SUB_IFDS:
            for sub in tiff.numbers(entry)[:_MAX_DIRECTORIES]:
                _clean(tiff, sub, keep_orientation)
    for offsets_tag, counts_tag in DATA:
        if offsets_tag in by_tag and counts_tag in by_tag:
            for data_at, data_size in zip(tiff.numbers(by_tag[offsets_tag]), tiff.numbers(by_tag[counts_tag]),
                                          strict=False):
                tiff.used.append((data_at, min(data_at + data_size, tiff.size)))
    if len(kept) != len(entries):
        if any(at < offset + length and offset < at + len(patch) for at, patch in tiff.patches):
            raise ImageRejected("the TIFF stream is damaged")  # directories that overlap
        header = struct.pack(tiff.order + ("Q" if tiff.big else "H"), len(kept))
        block = header + b"".join(e.raw for e in kept) + struct.pack(tiff.order + tiff.word, next_offset)
        tiff.patches.append((offset, block + bytes(length - len(block))))
    return next_offset


def _pieces(tiff: _Tiff) -> list[Piece]:
    """The used ranges of the source with the rewritten directories laid over them, zeros everywhere else."""
    merged: list[list[int]] = []
    for start, end in sorted(tiff.used):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    patches = sorted(tiff.patches, key=lambda p: p[0])
    pieces: list[Piece] = []
    at, i = 0, 0
    for start, end in merged:
        _zeros(pieces, at, start)
        at = start
        while i < len(patches) and patches[i][0] < end:  # a directory lies inside a used range
            patch_at, data = patches[i]
            if patch_at > at:
                pieces.append((at, patch_at))
            pieces.append(data)
            at, i = patch_at + len(data), i + 1
        if at < end:
            pieces.append((at, end))
        at = max(at, end)
    _zeros(pieces, at, tiff.size)
    return pieces


def _zeros(pieces: list[Piece], start: int, end: int) -> None:
    while start < end:
        size = min(_ZEROS, end - start)
        pieces.append(bytes(size))
        start += size

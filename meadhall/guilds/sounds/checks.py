"""What a sound upload may be (docs/customisation.md): MP3, Ogg, WAV, WebM or M4A, declared as such, with
content that agrees: the magic bytes must name the declared type, then mutagen must read the stream as
that format (which also gives the duration). WebM, which mutagen does not read, is confirmed by its
EBML header naming the `webm` document type; its duration stays unknown (null).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from meadhall.files import sniff
from meadhall.files.checks import Checked, unsupported
from meadhall.filestore import Spool
from meadhall.runtime import Runtime

SOUND_TYPES = ("audio/mpeg", "audio/ogg", "audio/wav", "audio/webm", "audio/mp4")
_SIGNATURE = {"audio/mpeg": "mp3", "audio/ogg": "ogg", "audio/wav": "wav", "audio/webm": "ebml", "audio/mp4": "mp4"}
_WEBM_HEAD = 4096


def sound_type_allowed(declared: str) -> bool:
    """The declared types of sounds, checked before the content is read."""
    return sniff.canonical(declared) in SOUND_TYPES


def _duration_ms(path: Path, content_type: str) -> int | None:
    """The duration read by mutagen as the declared format; raises ValueError when it cannot read it.
    mutagen (some 2 MiB) is imported by the first sound upload, not at start."""
    from mutagen import MutagenError
    from mutagen.mp3 import MP3
    from mutagen.mp4 import MP4
    from mutagen.oggflac import OggFLAC
    from mutagen.oggopus import OggOpus
    from mutagen.oggspeex import OggSpeex
    from mutagen.oggvorbis import OggVorbis
    from mutagen.wave import WAVE

    readers: dict[str, tuple[Any, ...]] = {
        "audio/mpeg": (MP3,), "audio/ogg": (OggVorbis, OggOpus, OggFLAC, OggSpeex), "audio/wav": (WAVE,),
        "audio/mp4": (MP4,),
    }
    if content_type == "audio/webm":
        with open(path, "rb") as fh:
            head = fh.read(_WEBM_HEAD)
        if b"\x42\x82" not in head or b"webm" not in head:  # EBML DocType element naming webm
            raise ValueError("not a WebM stream")
        return None
    for reader in readers[content_type]:
        try:
            audio = reader(path)
        except (MutagenError, OSError, ValueError, EOFError, IndexError, KeyError, TypeError, OverflowError):
            continue
        length = getattr(audio.info, "length", None)
        if length is None or length < 0:
            raise ValueError("no duration")
        return round(float(length) * 1000)
    raise ValueError("not readable as the declared format")


async def check_sound(rt: Runtime, spool: Spool, declared: str) -> Checked:
    """415 unless the content is a sound of the declared type; `metadata.duration_ms` when known."""
    content_type = sniff.canonical(declared)
    if content_type not in SOUND_TYPES:
        raise unsupported("sounds must be MP3, Ogg, WAV, WebM or M4A")

    def read() -> int | None:
        with open(spool.path, "rb") as fh:
            head = fh.read(sniff.HEAD_BYTES)
        if sniff.signature(head) != _SIGNATURE[content_type]:
            raise ValueError("the content does not match")
        return _duration_ms(spool.path, content_type)

    try:
        duration = await asyncio.to_thread(read)
    except ValueError:
        raise unsupported(f"the content is not a sound of the declared type {content_type}") from None
    return Checked(content_type, {} if duration is None else {"duration_ms": duration})

"""Custom emojis, sounds, the cosmetics gallery and personal styles (docs/customisation.md): sound files
made here (WAV by the standard library, MP3 frames and a WebM header by hand), upload calls, and rows
written directly to fill a guild up to its limits quickly."""

from __future__ import annotations

import io
import wave
from typing import Any

from PIL import Image, ImageDraw
from sqlalchemy import insert

from meadhall.db.schema import cosmetics, emojis, files, sounds
from tests.support.files import png
from tests.support.http import Api, unwrap


def emoji_png() -> bytes:
    """A small round amber image, as an emoji would be."""
    image = Image.new("RGBA", (32, 32), (0, 0, 0, 0))
    ImageDraw.Draw(image).ellipse((2, 2, 29, 29), fill=(230, 160, 40, 255))
    buf = io.BytesIO()
    image.save(buf, "PNG")
    return buf.getvalue()


def frame_png() -> bytes:
    """A gold ring with a transparent middle, as a frame is drawn."""
    image = Image.new("RGBA", (96, 96), (0, 0, 0, 0))
    ImageDraw.Draw(image).ellipse((3, 3, 92, 92), outline=(235, 185, 50, 255), width=9)
    buf = io.BytesIO()
    image.save(buf, "PNG")
    return buf.getvalue()


def wav(seconds: float = 1.0, rate: int = 8000) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\0\0" * int(rate * seconds))
    return buf.getvalue()


def mp3(frames: int = 40) -> bytes:
    """Silent MPEG-1 layer III frames (128 kbit/s, 44.1 kHz, 417 bytes each): about a second for 40."""
    return (bytes([0xFF, 0xFB, 0x90, 0x00]) + b"\0" * 413) * frames


def webm() -> bytes:
    """An EBML header naming the `webm` document type, then an empty segment."""
    doctype = b"\x42\x82\x84webm"
    header = b"\x1a\x45\xdf\xa3" + bytes([0x80 | len(doctype)]) + doctype
    return header + b"\x18\x53\x80\x67\x80" + b"\0" * 32


async def upload_emoji(client: Any, account: Any, guild_id: str, name: str | None, *, data: bytes | None = None,
                       content_type: str = "image/png", filename: str = "emoji.png", expect: int = 201) -> Any:
    form = {} if name is None else {"name": name}
    body = await Api(client).post(f"/guilds/{guild_id}/emojis", account, expect=expect, data=form,
                                  files={"file": (filename, png() if data is None else data, content_type)})
    return unwrap(body, "emoji", expect, 201)


async def upload_sound(client: Any, account: Any, guild_id: str, name: str, kind: str = "soundboard", *,
                       data: bytes | None = None, content_type: str = "audio/wav", expect: int = 201,
                       **fields: str) -> Any:
    form = {"name": name, "kind": kind, **fields}
    body = await Api(client).post(f"/guilds/{guild_id}/sounds", account, expect=expect, data=form,
                                  files={"file": ("sound.wav", wav() if data is None else data, content_type)})
    return unwrap(body, "sound", expect, 201)


async def upload_cosmetic(client: Any, account: Any, guild_id: str, name: str, kind: str = "frame", *,
                          data: bytes | None = None, content_type: str = "image/png", expect: int = 201) -> Any:
    body = await Api(client).post(f"/guilds/{guild_id}/cosmetics", account, expect=expect,
                                  data={"name": name, "kind": kind},
                                  files={"file": ("item.png", png() if data is None else data, content_type)})
    return unwrap(body, "cosmetic", expect, 201)


async def _fill(rt: Any, table: Any, count: int, row: Any, purpose: str) -> None:
    """`count` rows of `table` (each with a file row, as an upload would leave), written directly."""
    now = rt.clock.now()
    rows, file_rows = [], []
    for i in range(count):
        file_id, item_id = rt.ids.next(), rt.ids.next()
        file_rows.append({"id": file_id, "purpose": purpose, "uploader_id": None, "original_name": "f",
                          "content_type": "image/png", "size": 1, "sha256": "0" * 64, "meta": {},
                          "created_at": now})
        rows.append({"id": item_id, "file_id": file_id, "created_at": now, **row(i)})
    async with rt.engine.begin() as conn:
        await conn.execute(insert(files), file_rows)
        await conn.execute(insert(table), rows)


async def fill_emojis(rt: Any, guild_id: str, count: int) -> None:
    await _fill(rt, emojis, count, lambda i: {"guild_id": int(guild_id), "name": f"filler_{i}",
                                              "name_norm": f"filler_{i}", "animated": False, "creator_id": None},
                "avatar")


async def fill_sounds(rt: Any, guild_id: str, kind: str, count: int) -> None:
    await _fill(rt, sounds, count, lambda i: {"guild_id": int(guild_id), "kind": kind, "name": f"filler {i}",
                                              "name_norm": f"filler {i}", "emoji": None, "palette_event": None,
                                              "duration_ms": 1000, "creator_id": None}, "banner")


async def fill_cosmetics(rt: Any, guild_id: str, count: int) -> None:
    await _fill(rt, cosmetics, count, lambda i: {"guild_id": int(guild_id), "kind": "frame", "name": f"filler {i}"},
                "banner")

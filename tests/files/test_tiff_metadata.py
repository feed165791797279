"""Photo metadata of TIFF attachments (docs/files.md, "Photo metadata"): a TIFF is stored without its EXIF
directory, GPS position, camera tags, XMP and IPTC, turned upright by its orientation first; its pixels are
kept, and the File's size and sha256 describe the stored bytes."""

from __future__ import annotations

import hashlib
import io
from typing import Any

import pytest
from PIL import ExifTags, Image, ImageChops, TiffImagePlugin
from sqlalchemy import select

from meadhall.db.schema import files
from tests.support.files import fetch, upload
from tests.support.guilds import make_guild

GPS = {ExifTags.GPS.GPSLatitudeRef: "N", ExifTags.GPS.GPSLatitude: (55.0, 45.0, 21.0),
       ExifTags.GPS.GPSLongitudeRef: "E", ExifTags.GPS.GPSLongitude: (37.0, 37.0, 4.0)}
SECRETS = (b"PhoneMaker", b"SERIAL-0042", b"secret-location", b"iptc-caption", b"Holiday snap")
IMAGE_DATA_TAGS = {256, 257, 258, 259, 262, 273, 277, 278, 279, 284, 296, 282, 283, 317, 338, 339}


def scan(orientation: int = 1, size: tuple[int, int] = (40, 20), byte_order: str = "<",
         pages: int = 1) -> bytes:
    """A TIFF as a camera or a scanner stores it: make, a description, an EXIF directory with a serial
    number, a GPS directory, XMP and IPTC, and an orientation tag. The left half is dark, so a turn shows."""
    im = Image.new("RGB", size, (230, 230, 230))
    im.paste((20, 20, 20), (0, 0, size[0] // 2, size[1]))
    tags = TiffImagePlugin.ImageFileDirectory_v2()
    tags[ExifTags.Base.Orientation] = orientation
    tags[ExifTags.Base.Make] = "PhoneMaker"
    tags[ExifTags.Base.ImageDescription] = "Holiday snap"
    tags[ExifTags.IFD.Exif] = {ExifTags.Base.BodySerialNumber: "SERIAL-0042",
                               ExifTags.Base.DateTimeOriginal: "2024:07:01 10:00:00"}
    tags[ExifTags.IFD.GPSInfo] = GPS
    tags[700] = b'<x:xmpmeta xmlns:x="adobe:ns:meta/">secret-location</x:xmpmeta>'  # XMP
    tags[33723] = b"iptc-caption"  # IPTC
    out = io.BytesIO()
    extra = [im.copy() for _ in range(pages - 1)]
    im.save(out, "TIFF", tiffinfo=tags, byteorder=byte_order, save_all=pages > 1, append_images=extra)
    data = out.getvalue()
    with Image.open(io.BytesIO(data)) as check:  # the sample really carries what the test removes
        assert check.getexif().get_ifd(ExifTags.IFD.GPSInfo)
        assert all(secret in data for secret in SECRETS)
    return data


async def attach_tiff(client: Any, accounts: Any, data: bytes) -> tuple[dict[str, Any], bytes]:
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice)
    r = await upload(client, alice, f"/channels/{guild['system_channel_id']}/files", data, "scan.tiff",
                     "image/tiff")
    assert r.status_code == 201, r.text
    file = r.json()["file"]
    served = await fetch(client, alice, file["id"])
    assert served.status_code == 200, served.text
    return file, served.content


async def stored_row(rt: Any, file_id: str) -> dict[str, Any]:
    async with rt.engine.connect() as conn:
        return dict((await conn.execute(select(files).where(files.c.id == int(file_id)))).mappings().one())


def assert_clean(content: bytes, file: dict[str, Any], row: dict[str, Any]) -> Image.Image:
    assert row["size"] == file["size"] == len(content)
    assert row["sha256"] == file["sha256"] == hashlib.sha256(content).hexdigest()
    for secret in SECRETS:
        assert secret not in content, secret
    im = Image.open(io.BytesIO(content))
    im.load()
    exif = im.getexif()
    assert not exif.get_ifd(ExifTags.IFD.GPSInfo) and not exif.get_ifd(ExifTags.IFD.Exif)
    assert set(im.tag_v2) <= IMAGE_DATA_TAGS, sorted(set(im.tag_v2) - IMAGE_DATA_TAGS)
    assert "xmp" not in im.info
    return im


@pytest.mark.parametrize("byte_order", ["<", ">"], ids=["little-endian", "big-endian"])
async def test_a_tiff_attachment_loses_its_gps_exif_xmp_and_iptc_and_keeps_its_pixels(client, accounts, rt,
                                                                                       byte_order):
    sent = scan(byte_order=byte_order)

    file, content = await attach_tiff(client, accounts, sent)

    im = assert_clean(content, file, await stored_row(rt, file["id"]))
    assert file["content_type"] == "image/tiff"
    assert (file["metadata"]["width"], file["metadata"]["height"]) == im.size == (40, 20)
    assert ImageChops.difference(im.convert("RGB"), Image.open(io.BytesIO(sent)).convert("RGB")).getbbox() is None
    assert len(content) == len(sent)  # the metadata is overwritten in place, the pixel data copied as it is


async def test_a_turned_tiff_is_stored_upright_without_its_metadata(client, accounts, rt):
    file, content = await attach_tiff(client, accounts, scan(orientation=6))

    im = assert_clean(content, file, await stored_row(rt, file["id"]))
    assert im.size == (20, 40)  # turned a quarter clockwise: the dark left half is now on top
    assert im.convert("RGB").getpixel((10, 5))[0] < 100 and im.convert("RGB").getpixel((10, 35))[0] > 200
    assert ExifTags.Base.Orientation not in im.tag_v2


async def test_every_page_of_a_multi_page_tiff_is_cleaned(client, accounts, rt):
    file, content = await attach_tiff(client, accounts, scan(orientation=6, pages=3))

    row = await stored_row(rt, file["id"])
    assert row["size"] == len(content) and row["sha256"] == hashlib.sha256(content).hexdigest()
    for secret in SECRETS:
        assert secret not in content, secret
    with Image.open(io.BytesIO(content)) as im:
        assert im.n_frames == 3
        for page in range(3):
            im.seek(page)
            im.load()
            assert not im.getexif().get_ifd(ExifTags.IFD.GPSInfo)
            # Too many frames to turn: the orientation tag is kept, as for a photo too large to decode.
            assert set(im.tag_v2) - IMAGE_DATA_TAGS <= {ExifTags.Base.Orientation}

"""Photo metadata (docs/files.md): JPEG, PNG and WebP uploads of every purpose are stored without EXIF or XMP
(GPS position included), turned upright by their EXIF orientation first; the File's size and sha256 describe
the stored bytes. GIF is kept as it is. Image work runs in its own pool, never in the password-hash pool."""

from __future__ import annotations

import asyncio
import hashlib
import io
import threading
from typing import Any

from PIL import ExifTags, Image, ImageChops
from sqlalchemy import select

from meadhall.db.schema import files
from meadhall.files import checks
from meadhall.files.images import MAX_DECODED_PIXELS
from tests.support.files import fetch, gif, jpeg, upload
from tests.support.guilds import make_guild
from tests.support.http import API
from tests.support.personas import PASSWORD

GPS = {ExifTags.GPS.GPSLatitudeRef: "N", ExifTags.GPS.GPSLatitude: (55.0, 45.0, 21.0),
       ExifTags.GPS.GPSLongitudeRef: "E", ExifTags.GPS.GPSLongitude: (37.0, 37.0, 4.0)}
XMP = b'<x:xmpmeta xmlns:x="adobe:ns:meta/">secret-location</x:xmpmeta>'
MIME = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}


def photo(fmt: str = "JPEG", orientation: int = 6, size: tuple[int, int] = (40, 20)) -> bytes:
    """A picture as a phone stores it: camera make, GPS position, an orientation tag, and XMP. Its left
    half is dark, so the turn can be checked as well as the swapped dimensions."""
    im = Image.new("RGB", size, (230, 230, 230))
    im.paste((20, 20, 20), (0, 0, size[0] // 2, size[1]))
    exif = Image.Exif()
    exif[ExifTags.Base.Orientation] = orientation
    exif[ExifTags.Base.Make] = "PhoneMaker"
    exif[ExifTags.IFD.GPSInfo] = GPS
    out = io.BytesIO()
    options: dict[str, Any] = {"exif": exif}
    if fmt != "PNG":
        options["xmp"] = XMP
    if fmt == "JPEG":
        options["quality"] = 95
    im.save(out, fmt, **options)
    data = out.getvalue()
    with Image.open(io.BytesIO(data)) as check:  # the sample really carries what the test removes
        assert check.getexif().get_ifd(ExifTags.IFD.GPSInfo)
    return data


async def file_row(rt: Any, file_id: str) -> dict[str, Any]:
    async with rt.engine.connect() as conn:
        return dict((await conn.execute(select(files).where(files.c.id == int(file_id)))).mappings().one())


def assert_clean(content: bytes, row: dict[str, Any]) -> Image.Image:
    """No metadata in the served bytes, and the row describes exactly them."""
    assert row["size"] == len(content)
    assert row["sha256"] == hashlib.sha256(content).hexdigest()
    assert b"PhoneMaker" not in content and b"secret-location" not in content
    im = Image.open(io.BytesIO(content))
    im.load()
    assert len(im.getexif()) == 0, dict(im.getexif())
    assert "exif" not in im.info and "xmp" not in im.info and "XML:com.adobe.xmp" not in im.info
    assert (row["meta"]["width"], row["meta"]["height"]) == im.size
    return im


def upright(im: Image.Image) -> bool:
    """Orientation 6 means "turn 90 degrees clockwise": the dark left half of the sample ends on top."""
    gray = im.convert("L")
    width, height = gray.size
    return gray.getpixel((width // 2, height // 4)) < 100 < gray.getpixel((width // 2, 3 * height // 4))


async def room_of(client: Any, accounts: Any) -> tuple[Any, str]:
    owner = await accounts.register("owner")
    guild = await make_guild(client, owner)
    return owner, guild["system_channel_id"]


async def test_attachment_jpeg_loses_gps_exif_and_xmp_and_is_turned_upright(client, accounts, rt):
    owner, room = await room_of(client, accounts)
    original = photo("JPEG")
    r = await upload(client, owner, f"/channels/{room}/files", original, "IMG_0001.jpg", "image/jpeg")
    assert r.status_code == 201, r.text
    answered = r.json()["file"]
    content = (await fetch(client, owner, answered["id"])).content
    row = await file_row(rt, answered["id"])
    im = assert_clean(content, row)
    assert im.size == (20, 40) and upright(im)
    assert answered["size"] == len(content) and answered["sha256"] == row["sha256"]


async def test_avatar_jpeg_loses_gps_exif_and_is_turned_upright(client, accounts, rt):
    a = await accounts.register("alice")
    r = await upload(client, a, "/users/@me/avatar", photo("JPEG"), "me.jpg", "image/jpeg")
    assert r.status_code == 200, r.text
    file_id = r.json()["user"]["avatar"]
    content = (await fetch(client, a, file_id)).content
    im = assert_clean(content, await file_row(rt, file_id))
    assert im.size == (20, 40) and upright(im)


async def test_png_and_webp_lose_metadata_too(client, accounts, rt):
    owner, room = await room_of(client, accounts)
    for fmt in ("PNG", "WEBP"):
        for orientation in (6, 1):
            r = await upload(client, owner, f"/channels/{room}/files", photo(fmt, orientation), f"p.{fmt.lower()}",
                             MIME[fmt])
            assert r.status_code == 201, r.text
            file_id = r.json()["file"]["id"]
            im = assert_clean((await fetch(client, owner, file_id)).content, await file_row(rt, file_id))
            assert im.size == ((20, 40) if orientation == 6 else (40, 20)), (fmt, orientation)
            assert upright(im) if orientation == 6 else not upright(im)


async def test_upright_images_keep_their_pixels(client, accounts, rt):
    """Without a turn, metadata is cut out of the file: the pixels are the uploaded ones, bit for bit, and a
    file without metadata is stored exactly as sent."""
    owner, room = await room_of(client, accounts)
    for fmt in ("JPEG", "PNG", "WEBP"):
        original = photo(fmt, orientation=1)
        r = await upload(client, owner, f"/channels/{room}/files", original, "p", MIME[fmt])
        content = (await fetch(client, owner, r.json()["file"]["id"])).content
        assert len(content) < len(original)
        with Image.open(io.BytesIO(original)) as before, Image.open(io.BytesIO(content)) as after:
            assert ImageChops.difference(before.convert("RGB"), after.convert("RGB")).getbbox() is None, fmt
    plain = jpeg(32, 16)
    r = await upload(client, owner, f"/channels/{room}/files", plain, "plain.jpg", "image/jpeg")
    assert (await fetch(client, owner, r.json()["file"]["id"])).content == plain


async def test_animated_gif_is_kept_as_sent(client, accounts, rt):
    owner, room = await room_of(client, accounts)
    original = gif(frames=4)
    r = await upload(client, owner, f"/channels/{room}/files", original, "anim.gif", "image/gif")
    assert r.status_code == 201, r.text
    content = (await fetch(client, owner, r.json()["file"]["id"])).content
    assert content == original and r.json()["file"]["sha256"] == hashlib.sha256(original).hexdigest()


async def test_a_very_large_photo_is_not_decoded_but_keeps_only_its_orientation(client, accounts, rt):
    """Above the decoding cap the pixels are not turned (that would take hundreds of MiB): GPS, camera and
    XMP go, and a minimal EXIF block keeps the orientation so that viewers still show it upright."""
    owner, room = await room_of(client, accounts)
    width, height = 4200, 4000
    assert width * height > MAX_DECODED_PIXELS
    original = photo("JPEG", 6, (width, height))
    r = await upload(client, owner, f"/channels/{room}/files", original, "big.jpg", "image/jpeg")
    assert r.status_code == 201, r.text
    file_id = r.json()["file"]["id"]
    content = (await fetch(client, owner, file_id)).content
    row = await file_row(rt, file_id)
    assert row["size"] == len(content) and row["sha256"] == hashlib.sha256(content).hexdigest()
    assert b"PhoneMaker" not in content and b"secret-location" not in content
    with Image.open(io.BytesIO(content)) as im:
        assert im.size == (width, height)
        assert dict(im.getexif()) == {ExifTags.Base.Orientation: 6}
        assert "xmp" not in im.info


async def test_image_work_runs_in_its_own_pool_so_sign_ins_never_wait_for_it(client, accounts, rt, monkeypatch):
    """Every worker of the password-hash pool busy with a slow image would hold sign-ins; the image work
    runs on the image pool's threads and a sign-in goes through while it is stuck."""
    a = await accounts.register("alice")
    release = threading.Event()
    threads: list[str] = []
    original = checks.inspect_image

    def slow_inspect(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        release.wait(10)
        return original(*args, **kwargs)

    monkeypatch.setattr(checks, "inspect_image", slow_inspect)
    busy = rt.hash_pool._max_workers
    uploads = [asyncio.ensure_future(upload(client, a, "/users/@me/avatar", jpeg(), "me.jpg", "image/jpeg"))
               for _ in range(busy)]
    try:
        for _ in range(200):
            if threads:
                break
            await asyncio.sleep(0.01)
        assert threads, "no image check started"
        login = client.post(f"{API}/auth/login", json={"login": "alice", "password": PASSWORD})
        r = await asyncio.wait_for(login, timeout=5)
        assert r.status_code == 200, r.text
    finally:
        release.set()
        answers = await asyncio.gather(*uploads)
    assert all(r.status_code == 200 for r in answers), [r.text for r in answers]
    assert threads and all(name.startswith("image") for name in threads), threads

"""POST /channels/{id}/files (docs/files.md): who may upload, what is stored, size and type refusals,
names, and the File object."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import select

from meadhall.core import permissions as perms
from meadhall.db.schema import files
from tests.support.factories import update_default_permissions
from tests.support.files import attach, attached, bomb_png, fetch, gif, jpeg, multipart, png, stored, webp
from tests.support.guilds import room
from tests.support.http import API, error
from tests.support.personas import hall

P = perms.P
FILE_FIELDS = {"id", "purpose", "original_name", "content_type", "size", "sha256", "metadata", "url", "uploader_id",
               "bound", "created_at"}
LIMIT = 64 * 1024


async def test_upload_answers_the_file_object_and_keeps_the_content(client, accounts, rt, settings):
    h = await hall(client, accounts, rt)
    data = b"minutes of the meeting\n"
    f = await attached(client, h.a, h.general, data, "minutes.txt", "text/plain")
    assert set(f) == FILE_FIELDS
    assert f["purpose"] == "attachment" and f["original_name"] == "minutes.txt"
    assert f["content_type"] == "text/plain" and f["size"] == len(data)
    assert f["sha256"] == hashlib.sha256(data).hexdigest()
    assert f["metadata"] == {} and f["url"] == f"/files/{f['id']}"
    assert f["uploader_id"] == h.a.id and f["bound"] is False and f["created_at"].endswith("Z")
    # Named by id on disk, never by the uploaded name.
    assert stored(settings, f["id"]).read_bytes() == data
    assert not list((settings.DATA_DIR / "files").rglob("minutes*"))
    # No spool is left behind.
    assert list((settings.DATA_DIR / "files" / "tmp").iterdir()) == []


async def test_images_carry_their_dimensions(client, accounts, rt):
    h = await hall(client, accounts, rt)
    for data, ctype, name in ((png(30, 20), "image/png", "a.png"), (jpeg(30, 20), "image/jpeg", "a.jpg"),
                              (webp(30, 20), "image/webp", "a.webp"), (gif(4, 30, 20), "image/gif", "a.gif")):
        f = await attached(client, h.a, h.general, data, name, ctype)
        assert (f["content_type"], f["metadata"]) == (ctype, {"width": 30, "height": 20})


async def test_unbound_upload_is_private_to_its_uploader(client, accounts, rt):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general)
    r = await fetch(client, h.a, f["id"])
    assert r.status_code == 200 and r.content == b"hello world"
    r = await client.get(f"{API}/files/{f['id']}", headers=h.a.headers)
    assert r.status_code == 200 and r.json() == {"file": f}
    for other in (h.b, h.owner, h.outsider):
        assert error(await fetch(client, other, f["id"])) == (404, "file.not_found")
        assert error(await client.get(f"{API}/files/{f['id']}", headers=other.headers)) == (404, "file.not_found")


async def test_upload_needs_attach_files_and_a_visible_message_room(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await update_default_permissions(rt, h.id, int(perms.DEFAULT) & ~int(P.ATTACH_FILES))
    r = await attach(client, h.a, h.general)
    assert error(r) == (403, "perm.denied") and r.json()["error"]["permission"] == "ATTACH_FILES"
    # The owner holds every permission.
    assert (await attach(client, h.owner, h.general)).status_code == 201
    assert error(await attach(client, h.outsider, h.general)) == (404, "channel.not_found")
    assert error(await attach(client, h.a, "12345")) == (404, "channel.not_found")
    assert error(await attach(client, h.a, "not-an-id")) == (404, "channel.not_found")
    category = await room(client, h.owner, h.id, name="Stuff", type="category")
    assert error(await attach(client, h.owner, category["id"])) == (422, "channel.wrong_type")
    r = await client.post(f"{API}/channels/{h.general}/files", files={"file": ("a.txt", b"x", "text/plain")})
    assert error(r) == (401, "auth.unauthorized")
    async with rt.engine.connect() as conn:
        assert len((await conn.execute(select(files.c.id))).all()) == 1


async def test_voice_rooms_take_attachments(client, accounts, rt):
    h = await hall(client, accounts, rt)
    voice = await room(client, h.owner, h.id, name="Voice", type="voice")
    assert (await attach(client, h.a, voice["id"])).status_code == 201


@pytest.fixture
def settings_overrides():
    return {"MAX_UPLOAD_SIZE": LIMIT}


async def test_size_limit_is_exact(client, accounts, rt, settings):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general, b"x" * LIMIT, "max.bin", "application/octet-stream")
    assert f["size"] == LIMIT
    r = await attach(client, h.a, h.general, b"x" * (LIMIT + 1), "over.bin", "application/octet-stream")
    assert error(r) == (413, "file.too_large")
    async with rt.engine.connect() as conn:
        assert [row.id for row in (await conn.execute(select(files.c.id)))] == [int(f["id"])]
    assert list((settings.DATA_DIR / "files" / "tmp").iterdir()) == []


async def test_missing_file_part_and_non_multipart_bodies(client, accounts, rt):
    h = await hall(client, accounts, rt)
    url = f"{API}/channels/{h.general}/files"
    r = await client.post(url, files={"document": ("a.txt", b"x", "text/plain")}, headers=h.a.headers)
    assert error(r) == (422, "validation.failed")
    assert r.json()["error"]["details"] == [{"field": "file", "message": "the part named file is missing"}]
    r = await client.post(url, json={"file": "x"}, headers=h.a.headers)
    assert error(r) == (422, "validation.failed") and r.json()["error"]["details"][0]["field"] == "file"
    r = await client.post(url, content=b"--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc",
                          headers={**h.a.headers, "Content-Type": "multipart/form-data; boundary=b"})
    assert error(r) == (422, "validation.failed")  # the body ends inside the file part


async def test_type_must_match_the_content(client, accounts, rt):
    h = await hall(client, accounts, rt)
    refused = [
        (b"just some text", "notes.png", "image/png"),  # text declared as an image
        (png(), "image.txt", "text/plain"),  # an image declared as text
        (png(), "image.jpg", "image/jpeg"),  # one image format declared as another
        (png() + b"<html><script>alert(1)</script></html>", "poly.png", "image/png"),  # a polyglot
        (bomb_png(), "bomb.png", "image/png"),  # a decompression bomb
        (b"\x89PNG\r\n\x1a\n" + b"\0" * 40, "broken.png", "image/png"),  # a damaged image
        (b"hello", "song.mp3", "audio/mpeg"),  # audio that is not audio
        (b"hello", "photo.heic", "image/heic"),  # an image type that cannot be checked
        (png(), "picture.svg", "image/svg+xml"),  # a PNG declared as SVG
    ]
    for data, name, ctype in refused:
        r = await attach(client, h.a, h.general, data, name, ctype)
        assert error(r) == (415, "file.unsupported_type"), (name, ctype, r.text)
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(files.c.id))).all() == []


async def test_undeclared_types_are_sniffed(client, accounts, rt):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general, png(10, 12), "photo", "application/octet-stream")
    assert (f["content_type"], f["metadata"]) == ("image/png", {"width": 10, "height": 12})
    f = await attached(client, h.a, h.general, b"%PDF-1.7\n...", "doc", "application/octet-stream")
    assert f["content_type"] == "application/pdf"
    f = await attached(client, h.a, h.general, png() + b"trailing", "odd", "application/octet-stream")
    assert f["content_type"] == "application/octet-stream"  # not a clean image: a plain download
    f = await attached(client, h.a, h.general, b"\x00\x01", "blob", "application/octet-stream")
    assert f["content_type"] == "application/octet-stream"


async def test_any_other_type_is_kept(client, accounts, rt):
    h = await hall(client, accounts, rt)
    for data, name, ctype in ((b"<svg xmlns='http://www.w3.org/2000/svg'/>", "x.svg", "image/svg+xml"),
                              (b"<html><script>1</script></html>", "x.html", "text/html"),
                              (b"%PDF-1.4", "x.pdf", "application/pdf"),
                              (b"PK\x03\x04", "x.zip", "application/zip"),
                              (b"ID3\x04\x00" + b"\0" * 20, "x.mp3", "audio/mpeg")):
        f = await attached(client, h.a, h.general, data, name, ctype)
        assert f["content_type"] == ctype
    f = await attached(client, h.a, h.general, b"abc", "x.txt", "Text/Plain; charset=UTF-8")
    assert f["content_type"] == "text/plain"


@pytest.mark.parametrize("raw, expected", [
    ("../../etc/passwd", "passwd"),
    ("..\\..\\Windows\\win.ini", "win.ini"),
    ("/absolute/path/report.pdf", "report.pdf"),
    ("..", "file"),
    ("", "file"),
    ("bad\x00na\x1fme\x7f.txt", "badname.txt"),
    ("photo\u202egnp.exe", "photognp.exe"),
    ("  spaced  .txt  ", "spaced  .txt"),
    ("отчёт за май.txt", "отчёт за май.txt"),
    ("a" * 300 + ".txt", "a" * 251 + ".txt"),
])
async def test_original_names_are_cleaned(client, accounts, rt, settings, raw, expected):
    h = await hall(client, accounts, rt)
    body, headers = multipart(raw, b"data")
    r = await client.post(f"{API}/channels/{h.general}/files", content=body, headers={**h.a.headers, **headers})
    assert r.status_code == 201, r.text
    f = r.json()["file"]
    assert f["original_name"] == expected
    assert stored(settings, f["id"]).read_bytes() == b"data"


async def test_rfc5987_filename_parameter_is_read(client, accounts, rt):
    h = await hall(client, accounts, rt)
    body = (b"--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"fallback.txt\"; "
            b"filename*=UTF-8''%D0%BE%D1%82%D1%87%D1%91%D1%82.txt\r\nContent-Type: text/plain\r\n\r\ndata\r\n"
            b"--xyz--\r\n")
    r = await client.post(f"{API}/channels/{h.general}/files", content=body,
                          headers={**h.a.headers, "Content-Type": "multipart/form-data; boundary=xyz"})
    assert r.status_code == 201, r.text
    assert r.json()["file"]["original_name"] == "отчёт.txt"


async def test_other_form_fields_are_ignored(client, accounts, rt):
    h = await hall(client, accounts, rt)
    r = await client.post(f"{API}/channels/{h.general}/files", data={"name": "x", "kind": "y"},
                          files={"file": ("a.txt", b"abc", "text/plain")}, headers=h.a.headers)
    assert r.status_code == 201, r.text


async def test_uploads_bucket(client, accounts, rt):
    h = await hall(client, accounts, rt)
    r = await attach(client, h.a, h.general)
    assert r.headers["x-ratelimit-bucket"] == "uploads" and r.headers["x-ratelimit-limit"] == "30"

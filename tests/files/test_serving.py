"""GET/HEAD /files/{id} (docs/files.md; docs/reference/limits.md): content headers that keep browsers from running files, ETag and
304, HEAD, Content-Disposition with RFC 5987 names, rate-limit headers, and errors."""

from __future__ import annotations

import hashlib
from urllib.parse import quote

from tests.support.files import attached, fetch, png
from tests.support.http import API, error
from tests.support.personas import hall

CACHE = "private, max-age=31536000, immutable"
CSP = "default-src 'none'; sandbox"


async def test_content_headers(client, accounts, rt):
    h = await hall(client, accounts, rt)
    data = png(20, 10)
    f = await attached(client, h.a, h.general, data, "pic.png", "image/png")
    r = await fetch(client, h.a, f["id"])
    assert r.status_code == 200 and r.content == data
    assert r.headers["content-type"] == "image/png"
    assert r.headers["content-length"] == str(len(data))
    assert r.headers["etag"] == f'"{hashlib.sha256(data).hexdigest()}"'
    assert r.headers["cache-control"] == CACHE
    assert r.headers["content-disposition"] == 'inline; filename="pic.png"'
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["content-security-policy"] == CSP
    assert r.headers["x-ratelimit-bucket"] == "files" and r.headers["x-ratelimit-limit"] == "600"


async def test_anything_a_browser_could_run_is_downloaded(client, accounts, rt):
    h = await hall(client, accounts, rt)
    cases = [
        (b"<html><script>alert(1)</script></html>", "page.html", "text/html", "attachment"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>", "x.svg", "image/svg+xml",
         "attachment"),
        (b"alert(1)", "x.js", "text/javascript", "attachment"),
        (b"plain", "x.txt", "text/plain", "attachment"),
        (b"%PDF-1.4", "x.pdf", "application/pdf", "attachment"),
        (b"\x00\x01", "x.bin", "application/octet-stream", "attachment"),
        (b"OggS" + b"\0" * 40, "x.ogg", "audio/ogg", "inline"),
        (b"\x00\x00\x00\x18ftypmp42" + b"\0" * 40, "x.mp4", "video/mp4", "inline"),
    ]
    for data, name, ctype, kind in cases:
        f = await attached(client, h.a, h.general, data, name, ctype)
        r = await fetch(client, h.a, f["id"])
        assert r.headers["content-type"] == ctype
        assert r.headers["content-disposition"] == f'{kind}; filename="{name}"', ctype
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["content-security-policy"] == CSP


async def test_non_ascii_names_use_rfc_5987(client, accounts, rt):
    h = await hall(client, accounts, rt)
    name = "Отчёт — café 2024.pdf"
    f = await attached(client, h.a, h.general, b"%PDF-1.4", name, "application/pdf")
    assert f["original_name"] == name
    r = await fetch(client, h.a, f["id"])
    header = r.headers["content-disposition"]
    fallback, encoded = header.split("; filename*=UTF-8''")
    assert fallback == 'attachment; filename="_____ _ cafe 2024.pdf"'
    assert encoded == quote(name, safe="")
    assert header.isascii()
    # A quote never reaches the quoted name unescaped (sent as RFC 5987 to arrive intact).
    body = (b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename*=UTF-8''say%20%22hi%22.txt\r\n"
            b"Content-Type: text/plain\r\n\r\nx\r\n--b--\r\n")
    r = await client.post(f"{API}/channels/{h.general}/files", content=body,
                          headers={**h.a.headers, "Content-Type": "multipart/form-data; boundary=b"})
    assert r.json()["file"]["original_name"] == 'say "hi".txt'
    header = (await fetch(client, h.a, r.json()["file"]["id"])).headers["content-disposition"]
    assert header == "attachment; filename=\"say _hi_.txt\"; filename*=UTF-8''say%20%22hi%22.txt"


async def test_etag_and_304(client, accounts, rt):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general, png(), "a.png", "image/png")
    etag = (await fetch(client, h.a, f["id"])).headers["etag"]
    for value in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        r = await fetch(client, h.a, f["id"], **{"If-None-Match": value})
        assert r.status_code == 304, value
        assert r.content == b"" and r.headers["etag"] == etag and r.headers["cache-control"] == CACHE
    r = await fetch(client, h.a, f["id"], **{"If-None-Match": '"something-else"'})
    assert r.status_code == 200 and r.content == png()
    # 304 is never a way around the access check.
    r = await fetch(client, h.b, f["id"], **{"If-None-Match": etag})
    assert error(r) == (404, "file.not_found")


async def test_head_answers_the_headers_of_get(client, accounts, rt):
    h = await hall(client, accounts, rt)
    data = b"some text " * 100
    f = await attached(client, h.a, h.general, data, "t.txt", "text/plain")
    got = await fetch(client, h.a, f["id"])
    head = await fetch(client, h.a, f["id"], method="HEAD")
    assert head.status_code == 200 and head.content == b""
    for name in ("content-type", "content-length", "etag", "cache-control", "content-disposition",
                 "x-content-type-options", "content-security-policy"):
        assert head.headers[name] == got.headers[name], name
    assert head.headers["content-length"] == str(len(data))
    assert (await fetch(client, h.b, f["id"], method="HEAD")).status_code == 404
    assert (await fetch(client, None, f["id"], method="HEAD")).status_code == 401
    assert (await fetch(client, h.a, f["id"], method="HEAD", **{"If-None-Match": got.headers["etag"]})
            ).status_code == 304


async def test_ranges_are_not_served(client, accounts, rt):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general, b"0123456789", "d.txt", "text/plain")
    r = await fetch(client, h.a, f["id"], Range="bytes=2-4")
    assert r.status_code == 200 and r.content == b"0123456789" and r.headers["accept-ranges"] == "none"


async def test_errors(client, accounts, rt, settings):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general)
    assert error(await fetch(client, None, f["id"])) == (401, "auth.unauthorized")
    r = await client.get(f"/files/{f['id']}", headers={"Authorization": "Bearer nonsense"})
    assert error(r) == (401, "auth.unauthorized")
    for bad in ("0", "999999999", "abc", "-1", "1" * 30):
        assert error(await fetch(client, h.a, bad)) == (404, "file.not_found"), bad
        assert error(await client.get(f"{API}/files/{bad}", headers=h.a.headers)) == (404, "file.not_found")
    # Content lost from the disk: the row alone does not pretend.
    path = settings.DATA_DIR / "files" / f"{int(f['id']) % 256:02x}" / f["id"]
    path.unlink()
    assert error(await fetch(client, h.a, f["id"])) == (404, "file.not_found")
    assert (await fetch(client, h.a, f["id"], method="HEAD")).status_code == 404


async def test_cookie_sessions_fetch_files(client, accounts, rt):
    """Browsers fetch images with the session cookie (docs/files.md: cookie or Bearer)."""
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general)
    r = await client.get(f"/files/{f['id']}", cookies={"__Host-session": h.a["token"]})
    assert r.status_code == 200 and r.content == b"hello world"


async def test_files_bucket_limits(client, accounts, rt):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general)
    r = await fetch(client, h.a, f["id"])
    remaining = int(r.headers["x-ratelimit-remaining"])
    r = await fetch(client, h.a, f["id"])
    assert int(r.headers["x-ratelimit-remaining"]) == remaining - 1

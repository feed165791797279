"""The pure pieces of the files domain, table-tested: name cleaning, declared types, Content-Disposition,
signatures, and the image walker that finds where an image ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from meadhall.files import sniff
from meadhall.files.images import ImageRejected, inspect_image
from meadhall.files.names import clean_name, content_disposition, disposition_kind, media_type
from meadhall.files.serve import etag_matches
from tests.support.files import bomb_png, gif, jpeg, png, png_of_size, webp


@pytest.mark.parametrize("raw, expected", [
    (None, "file"), ("", "file"), ("   ", "file"), (".", "file"), ("..", "file"), ("a/..", "file"),
    ("C:\\Users\\me\\cv.docx", "cv.docx"), ("dir/sub/", "file"), ("tab\there.txt", "tabhere.txt"),
    ("line\nbreak.txt", "linebreak.txt"), ("e\u0301.txt", "\u00e9.txt"), ("\u2066x\u2069.txt", "x.txt"),
    ("x" * 400, "x" * 255), ("y" * 300 + ".tar.gz", "y" * 252 + ".gz"),
])
def test_clean_name(raw, expected):
    assert clean_name(raw) == expected


@pytest.mark.parametrize("raw, expected", [
    (None, "application/octet-stream"), ("", "application/octet-stream"), ("IMAGE/PNG", "image/png"),
    ("text/plain; charset=utf-8", "text/plain"), ("nonsense", "application/octet-stream"),
    ("text/html\r\nX-Injected: 1", "application/octet-stream"), ("a/b c", "application/octet-stream"),
])
def test_media_type(raw, expected):
    assert media_type(raw) == expected


def test_content_disposition():
    assert content_disposition("inline", "a.png") == 'inline; filename="a.png"'
    assert content_disposition("attachment", "ü.txt") == "attachment; filename=\"u.txt\"; filename*=UTF-8''%C3%BC.txt"
    assert content_disposition("attachment", "日本.txt") == (
        "attachment; filename=\"__.txt\"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt")
    assert content_disposition("attachment", "a;b,c.txt") == 'attachment; filename="a;b,c.txt"'


@pytest.mark.parametrize("ctype, kind", [
    ("image/png", "inline"), ("image/svg+xml", "attachment"), ("audio/ogg", "inline"), ("video/mp4", "inline"),
    ("text/html", "attachment"), ("application/xhtml+xml", "attachment"), ("text/plain", "attachment"),
    ("application/pdf", "attachment"), ("application/octet-stream", "attachment"),
])
def test_disposition_kind(ctype, kind):
    assert disposition_kind(ctype) == kind


@pytest.mark.parametrize("head, found", [
    (png(), "png"), (jpeg(), "jpeg"), (gif(), "gif"), (webp(), "webp"), (b"%PDF-1.7", "pdf"), (b"ID3\x04", "mp3"),
    (b"\xff\xfb\x90\x00", "mp3"), (b"\xff\xf1\x50\x80", "adts"), (b"OggS\x00", "ogg"), (b"fLaC", "flac"),
    (b"RIFF\x00\x00\x00\x00WAVEfmt ", "wav"), (b"\x1a\x45\xdf\xa3", "ebml"), (b"\x00\x00\x00\x20ftypisom", "mp4"),
    (b"hello", None), (b"", None), (b"<html>", None),
])
def test_signature(head, found):
    assert sniff.signature(head[:64]) == found


@pytest.mark.parametrize("declared, found, allowed", [
    ("text/plain", None, True), ("text/plain", "png", False), ("application/pdf", "pdf", True),
    ("text/plain", "pdf", False), ("audio/mpeg", "mp3", True), ("audio/mpeg", "ogg", False),
    ("audio/mpeg", None, False), ("video/x-unknown", "mp4", False), ("video/mp4", "mp4", True),
    ("application/zip", None, True), ("image/svg+xml", None, True), ("image/svg+xml", "png", False),
])
def test_signature_allows(declared, found, allowed):
    assert sniff.signature_allows(declared, found) is allowed


def test_etag_matching():
    tag = '"abc"'
    assert etag_matches(tag, tag) and etag_matches('W/"abc"', tag) and etag_matches('"x", "abc"', tag)
    assert etag_matches("*", tag)
    assert not etag_matches(None, tag) and not etag_matches("", tag) and not etag_matches('"abcd"', tag)


def _inspect(tmp_path: Path, data: bytes, fmt: str, decode: bool = True):
    path = tmp_path / "img"
    path.write_bytes(data)
    return inspect_image(path, fmt, decode=decode)


@pytest.mark.parametrize("data, fmt", [
    (png(), "PNG"), (jpeg(), "JPEG"), (webp(), "WEBP"), (gif(7), "GIF"), (png_of_size(10_000), "PNG"),
])
def test_images_accepted(tmp_path, data, fmt):
    info = _inspect(tmp_path, data, fmt)
    assert info.format == fmt and info.width > 0


def test_gif_frames_are_counted(tmp_path):
    assert _inspect(tmp_path, gif(7), "GIF").frames == 7


@pytest.mark.parametrize("data, fmt, reason", [
    (png() + b"\0", "PNG", "after the end"),
    (jpeg() + b"\xff\xd8\xff", "JPEG", "after the end"),
    (gif() + b";", "GIF", "after the end"),
    (webp() + b"RIFF", "WEBP", "after the end"),
    (png()[:-1], "PNG", "truncated"),
    (jpeg()[:-2], "JPEG", "truncated"),
    (gif()[:-1], "GIF", "truncated"),
    (bomb_png(), "PNG", "larger than"),
    (bomb_png(5000, 5000), "PNG", "larger than"),  # 25 megapixels: above the cap of decoded images
    (gif(501, 2, 2), "GIF", "frames"),
    (png(), "JPEG", "not an image of the declared type"),
    (b"GIF89a<script>", "GIF", None),
])
def test_images_refused(tmp_path, data, fmt, reason):
    with pytest.raises(ImageRejected, match=reason):
        _inspect(tmp_path, data, fmt)


def test_attachment_images_are_not_decoded_but_still_capped(tmp_path):
    info = _inspect(tmp_path, bomb_png(5000, 5000), "PNG", decode=False)  # 25 Mpx: fine as an attachment
    assert (info.width, info.height) == (5000, 5000)
    with pytest.raises(ImageRejected, match="larger than"):
        _inspect(tmp_path, bomb_png(10_000, 10_000), "PNG", decode=False)

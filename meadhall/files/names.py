"""Names and types as they arrive and as they leave: the uploaded name made harmless (docs/files.md), the
declared media type normalised, and the `Content-Disposition` of the content answer (RFC 6266 / 5987)."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

MAX_NAME = 255
DEFAULT_NAME = "file"
OCTET_STREAM = "application/octet-stream"

# Bidirectional controls are format characters (Cf), not control characters (Cc), but they make
# `photo\u202egnp.exe` read as `photoexe.png`: they go too.
_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_TOKEN = r"[a-z0-9!#$&^_.+-]{1,127}"  # noqa: S105 - an RFC token, not a secret
_MEDIA_TYPE = re.compile(rf"^{_TOKEN}/{_TOKEN}$")


def clean_name(raw: str | None) -> str:
    """The original name without path parts and control characters, at most 255 characters; `file`
    when nothing is left. The extension survives truncation."""
    name = (raw or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch) != "Cc" and ch not in _BIDI)
    name = unicodedata.normalize("NFC", name).strip()
    if name in ("", ".", ".."):
        return DEFAULT_NAME
    if len(name) > MAX_NAME:
        stem, dot, ext = name.rpartition(".")
        if dot and stem and len(ext) <= 16:
            name = stem[: MAX_NAME - len(ext) - 1].rstrip() + "." + ext
        else:
            name = name[:MAX_NAME]
    return name


def media_type(raw: str | None) -> str:
    """The declared type without parameters, lower-case; `application/octet-stream` when missing or
    malformed (it is then treated as undeclared)."""
    value = (raw or "").split(";", 1)[0].strip().lower()
    return value if _MEDIA_TYPE.match(value) else OCTET_STREAM


def _ascii_fallback(name: str) -> str:
    folded = unicodedata.normalize("NFKD", name)
    chars = []
    for ch in folded:
        if unicodedata.combining(ch):
            continue
        chars.append(ch if 0x20 <= ord(ch) < 0x7F and ch not in '"\\' else "_")
    return "".join(chars) or DEFAULT_NAME


def content_disposition(kind: str, name: str) -> str:
    """`inline` or `attachment` with the name: `filename="..."` alone for a plain ASCII name, else an
    ASCII fallback plus `filename*=UTF-8''<percent-encoded>` (RFC 5987) that browsers prefer."""
    fallback = _ascii_fallback(name)
    if fallback == name:
        return f'{kind}; filename="{name}"'
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def disposition_kind(content_type: str) -> str:
    """Inline only for what a browser shows and never runs: images (not SVG, which can carry script),
    audio and video. Everything else is downloaded."""
    if content_type == "image/svg+xml":
        return "attachment"
    if content_type.startswith(("image/", "audio/", "video/")):
        return "inline"
    return "attachment"

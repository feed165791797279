"""What the first bytes of a file say it is (magic bytes), and which declared types each answer allows.

Only strong signatures are recognised: a file that matches none is "unknown", which never contradicts a
declared type that cannot be checked (text, documents, archives). A recognised signature must agree with
the declared type (docs/files.md): a PNG declared `text/plain`, or text declared `image/png`, is refused.
"""

from __future__ import annotations

HEAD_BYTES = 64

# Pillow format names of the image types this service checks by decoding.
IMAGE_FORMATS = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/gif": "GIF",
    "image/webp": "WEBP",
    "image/bmp": "BMP",
    "image/tiff": "TIFF",
    "image/x-icon": "ICO",
    "image/vnd.microsoft.icon": "ICO",
}
# Aliases some clients send for the same types.
ALIASES = {"image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg", "image/x-png": "image/png",
           "image/x-ms-bmp": "image/bmp", "audio/mp3": "audio/mpeg", "audio/x-wav": "audio/wav",
           "audio/wave": "audio/wav", "audio/vnd.wave": "audio/wav", "audio/x-flac": "audio/flac",
           "audio/x-m4a": "audio/mp4", "audio/m4a": "audio/mp4"}
# The web image formats: avatars, icons, banners, splashes and backgrounds (docs/files.md).
WEB_IMAGES = ("image/png", "image/jpeg", "image/webp", "image/gif")

# Declared audio/video type -> signatures that may carry it.
MEDIA_SIGNATURES = {
    "audio/mpeg": {"mp3"},
    "audio/ogg": {"ogg"}, "audio/opus": {"ogg"}, "video/ogg": {"ogg"}, "application/ogg": {"ogg"},
    "audio/wav": {"wav"},
    "audio/webm": {"ebml"}, "video/webm": {"ebml"}, "video/x-matroska": {"ebml"}, "audio/x-matroska": {"ebml"},
    "audio/mp4": {"mp4"}, "video/mp4": {"mp4"}, "video/quicktime": {"mp4"}, "video/3gpp": {"mp4"},
    "audio/aac": {"adts"},
    "audio/flac": {"flac"},
}
# Signature -> the type adopted for an upload declared only as application/octet-stream.
SIGNATURE_TYPES = {
    "png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
    "mp3": "audio/mpeg", "ogg": "audio/ogg", "wav": "audio/wav", "ebml": "video/webm", "mp4": "video/mp4",
    "flac": "audio/flac", "pdf": "application/pdf",
}
IMAGE_SIGNATURES = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}


def canonical(content_type: str) -> str:
    return ALIASES.get(content_type, content_type)


def signature(head: bytes) -> str | None:
    """The recognised kind of content from its first bytes, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "wav"
    if head.startswith(b"%PDF-"):
        return "pdf"
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0
                                   and head[1] & 0x06 != 0):
        return "mp3"
    if len(head) > 1 and head[0] == 0xFF and head[1] & 0xF6 == 0xF0:
        return "adts"
    if head.startswith(b"OggS"):
        return "ogg"
    if head.startswith(b"fLaC"):
        return "flac"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "ebml"
    if head[4:8] == b"ftyp":
        return "mp4"
    return None


def signature_allows(declared: str, found: str | None) -> bool:
    """Whether the recognised content agrees with a declared type that is neither an image checked by
    decoding nor `application/octet-stream`."""
    allowed = MEDIA_SIGNATURES.get(declared)
    if allowed is not None:
        return found in allowed
    if declared.startswith(("audio/", "video/")):
        return False  # served inline, so it must be something this service recognises
    if found is None:
        return True
    if found == "pdf":
        return declared == "application/pdf"
    # An image or media signature under a type that does not name it (a PNG declared `text/plain`).
    return False

"""Text helpers shared by every domain."""

from __future__ import annotations

import unicodedata


def norm(value: str) -> str:
    """The `*_norm` form: NFKC then Unicode casefold, so `Ёлка` and `ёлка` match (SQLite folds only ASCII)."""
    return unicodedata.normalize("NFKC", value).casefold()


def escape_like(value: str, escape: str = "\\") -> str:
    """Escape LIKE wildcards so user text matches literally (use with `escape='\\'`)."""
    return value.replace(escape, escape * 2).replace("%", escape + "%").replace("_", escape + "_")


# Control characters (docs/reference/errors.md): every code point of Unicode category Cc (U+0000-U+001F, U+007F and the
# C1 range U+0080-U+009F) is refused in text fields. Multi-line fields (message content, bio, descriptions,
# topics) keep line feed and tab. Single-line fields also refuse U+2028/U+2029 (line and paragraph
# separators), which would break a name across lines just as a line feed would.
_MULTILINE_ALLOWED = frozenset("\n\t")
_LINE_BREAKS = frozenset("\u2028\u2029")


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return code < 0x20 or 0x7F <= code <= 0x9F


def check_single_line(value: str) -> str:
    """ValueError when `value` holds a control character or a line/paragraph separator."""
    if not value.isprintable() and any(_is_control(ch) or ch in _LINE_BREAKS for ch in value):
        raise ValueError("must not contain control characters or line breaks")
    return value


def check_multiline(value: str) -> str:
    """ValueError when `value` holds a control character other than line feed and tab."""
    if not value.isprintable() and any(_is_control(ch) and ch not in _MULTILINE_ALLOWED for ch in value):
        raise ValueError("must not contain control characters other than line feed and tab")
    return value

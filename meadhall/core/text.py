"""Text helpers shared by every domain."""

from __future__ import annotations

import unicodedata


def norm(value: str) -> str:
    """The `*_norm` form: NFKC then Unicode casefold, so `Ёлка` and `ёлка` match (SQLite folds only ASCII)."""
    return unicodedata.normalize("NFKC", value).casefold()


def escape_like(value: str, escape: str = "\\") -> str:
    """Escape LIKE wildcards so user text matches literally (use with `escape='\\'`)."""
    return value.replace(escape, escape * 2).replace("%", escape + "%").replace("_", escape + "_")


def strip_controls(value: str) -> str:
    return "".join(ch for ch in value if unicodedata.category(ch)[0] != "C")

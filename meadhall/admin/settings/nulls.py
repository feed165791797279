"""Fields where absent means unchanged refuse an explicit null, named by their own path (422)."""

from __future__ import annotations


def refuse_null(value: object) -> object:
    """A `mode="before"` field validator: runs only for values sent, so absence stays allowed."""
    if value is None:
        raise ValueError("cannot be null")
    return value

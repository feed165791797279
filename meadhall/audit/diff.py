"""The `changes` of an audit entry: `{"field": [old, new]}` (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def changes(before: Mapping[str, object], after: dict[str, Any]) -> dict[str, list[Any]]:
    """`{"field": [old, new]}` for audit data (OpenAPI: listAuditLog); `before` is any typed row."""
    out: dict[str, list[Any]] = {}
    for key, new in after.items():
        old = before[key] if key in before else None
        if old != new:
            out[key] = [_plain(old), _plain(new)]
    return out


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) and value > 2**53 else value

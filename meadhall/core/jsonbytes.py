"""JSON answers as bytes, encoded once: orjson, which gives the bytes Starlette's JSONResponse would (compact,
UTF-8, no ASCII escaping) several times faster, and JSONResponse's own encoding for what orjson refuses
(non-string keys, integers past 64 bits)."""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(content: Any) -> bytes:
    try:
        return orjson.dumps(content)
    except TypeError:
        return json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None,
                          separators=(",", ":")).encode("utf-8")

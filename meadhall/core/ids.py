"""Snowflake ids (docs/architecture.md): 42 bits of milliseconds since 2024-01-01T00:00:00Z, 10 bits node id,
12 bits sequence. Written as decimal strings in JSON and paths."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

EPOCH_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
MAX_ID = (1 << 63) - 1


class SnowflakeGenerator:
    def __init__(self, node_id: int, now_ms: Callable[[], int] | None = None) -> None:
        if not 0 <= node_id <= 1023:
            raise ValueError("node id must be 0..1023")
        self.node_id = node_id
        self._now_ms = now_ms or (lambda: int(time.time() * 1000))
        self._last_ms = -1
        self._seq = 0
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            ms = max(self._now_ms() - EPOCH_MS, self._last_ms)
            if ms == self._last_ms:
                self._seq = (self._seq + 1) & 0xFFF
                if self._seq == 0:
                    # 4096 ids in one millisecond: borrow the next millisecond so ids stay unique and
                    # ordered even if the clock does not move (a frozen test clock).
                    ms += 1
            else:
                self._seq = 0
            self._last_ms = ms
            return (ms << 22) | (self.node_id << 12) | self._seq


def id_timestamp_ms(snowflake: int) -> int:
    """Unix milliseconds at which an id was made."""
    return (snowflake >> 22) + EPOCH_MS


def sid(value: int | None) -> str | None:
    """An id as the API writes it (a decimal string), or None."""
    return None if value is None else str(value)


def parse_id(value: str | int | None) -> int | None:
    """A snowflake from a path or body value; None when malformed (callers answer 404 or 422)."""
    if isinstance(value, int):
        return value if 0 <= value <= MAX_ID else None
    if not isinstance(value, str) or not value.isascii() or not value.isdigit() or len(value) > 19:
        return None
    number = int(value)
    return number if number <= MAX_ID else None

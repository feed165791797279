"""What an outage looks like to a client (docs/operations.md, "Outages"): 503 `service.unavailable` with
Retry-After, answered within a bound rather than held."""

from __future__ import annotations

import time
from typing import Any

import httpx


def assert_unavailable(r: httpx.Response, elapsed: float, prompt: float) -> None:
    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == "service.unavailable"
    assert r.headers["Retry-After"] == "5"
    assert elapsed < prompt, f"answered after {elapsed:.1f} s"


async def timed(call: Any) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    r = await call
    return r, time.monotonic() - started

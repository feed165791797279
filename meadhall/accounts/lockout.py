"""Sign-in lockout (API.md 3.2.1): 5 consecutive failures per login value within 15 minutes lock that
value for 15 minutes; 50 failures per client address within 15 minutes lock the address. Attempts
during a lock are refused with 429 (bucket `auth.lockout`), are not counted and do not extend it.

Counters live in the shared store (Redis when configured) with their expiry in service-clock time.
"""

from __future__ import annotations

import hashlib
from typing import Any

from meadhall.core.errors import rate_limited
from meadhall.runtime import Runtime

WINDOW = 15 * 60
LOCK = 15 * 60
LOGIN_FAILURES = 5
ADDRESS_FAILURES = 50


def _login_key(login_norm: str) -> str:
    # Hashed so that typed logins (which may be passwords typed in the wrong field) are not stored.
    return "lockout:login:" + hashlib.sha256(login_norm.encode()).hexdigest()


def _ip_key(ip: str) -> str:
    return f"lockout:ip:{ip}"


async def _locked_for(rt: Runtime, key: str, now: float) -> float:
    state: dict[str, Any] | None = await rt.store.get(key, now)
    if state and state.get("until", 0) > now:
        return float(state["until"] - now)
    return 0.0


async def check(rt: Runtime, login_norm: str, ip: str) -> None:
    """Raise 429 while the login value or the address is locked."""
    now = rt.now_ts()
    remaining = max(await _locked_for(rt, _login_key(login_norm), now), await _locked_for(rt, _ip_key(ip), now))
    # Redis's cjson keeps 14 significant digits of the stored lock end (~0.1 ms at epoch seconds):
    # round to the millisecond so that a fresh 15-minute lock answers Retry-After 900, not 901.
    remaining = round(remaining, 3)
    if remaining > 0:
        err = rate_limited("auth.lockout", remaining)
        err.headers["Retry-After"] = str(max(1, int(-(-remaining // 1))))
        raise err


async def _count(rt: Runtime, key: str, threshold: int, now: float) -> bool:
    # One atomic step in the store: concurrent failures are all counted (no lost updates).
    state = await rt.store.count(key, now, window=WINDOW, threshold=threshold, lock=LOCK)
    return bool(state["until"] > now)


async def failure(rt: Runtime, login_norm: str, ip: str) -> bool:
    """Count a failure; True when it locked the login value or the address."""
    now = rt.now_ts()
    by_login = await _count(rt, _login_key(login_norm), LOGIN_FAILURES, now)
    by_ip = await _count(rt, _ip_key(ip), ADDRESS_FAILURES, now)
    return by_login or by_ip


async def success(rt: Runtime, login_norm: str) -> None:
    await rt.store.delete(_login_key(login_norm))

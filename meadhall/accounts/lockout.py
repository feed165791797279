"""Sign-in lockout (docs/architecture.md): 5 consecutive failures per account within 15 minutes lock that
account for 15 minutes; 50 failures per client address within 15 minutes lock the address. Attempts
during a lock are refused with 429 (bucket `auth.lockout`), are not counted and do not extend it.

The count is per account whichever identifier was typed, username or email in any letter case: counted per
typed value, the two identifiers of one account gave 10 guesses per window. A value that names no account
is counted under itself (its normalised form), so an unknown login is locked after 5 failures like a known
one and the lockout does not tell whether an account exists.

An attempt is reserved (counted as a failure) atomically BEFORE its password is checked: counting after
the ~190 ms hash let parallel guesses all pass the check, about 30 per lock window instead of 5. An
attempt that turns out not to be a failure gives its reservation back (`release`: a ban, a missing
second factor, administrator enrolment) or resets the login value (`succeeded`). An attempt that ends
in an unexpected error keeps its reservation, which errs towards counting.

Step-up re-verifications (`POST /auth/step-up`, the second factor of 2FA disable) count towards the same
lockout, under the account and the client address.

Counters live in the shared store (Redis when configured) with their expiry in service-clock time.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from meadhall.api.client import address_key
from meadhall.core.errors import AppError, rate_limited
from meadhall.runtime import Runtime

WINDOW = 15 * 60
LOCK = 15 * 60
LOGIN_FAILURES = 5
ADDRESS_FAILURES = 50


def account(user_id: int) -> str:
    """The lockout subject of an existing account, whichever of its identifiers was typed."""
    return f"account:{user_id}"


def unknown_login(login_norm: str) -> str:
    """The lockout subject of a typed login value that names no account."""
    return f"login:{login_norm}"


def _subject_key(subject: str) -> str:
    # Hashed so that typed logins (which may be passwords typed in the wrong field) are not stored.
    return "lockout:login:" + hashlib.sha256(subject.encode()).hexdigest()


def _ip_key(ip: str) -> str:
    # IPv6 clients by their /64, IPv4 by address (api/client.py).
    return f"lockout:ip:{address_key(ip)}"


@dataclass
class Attempt:
    """The reservations one sign-in or re-verification holds: (key, threshold, window start, count)."""

    held: list[tuple[str, int, float, int]] = field(default_factory=list)

    @property
    def login_keys(self) -> list[str]:
        return [key for key, threshold, _, _ in self.held if threshold == LOGIN_FAILURES]

    @property
    def locks_on_failure(self) -> bool:
        """True when this attempt, if it fails, is the one that reached a threshold."""
        return any(n >= threshold for _, threshold, _, n in self.held)


def _refusal(remaining: float) -> AppError:
    # Redis's cjson keeps 14 significant digits of the stored lock end (~0.1 ms at epoch seconds):
    # round to the millisecond so that a fresh 15-minute lock answers Retry-After 900, not 901.
    remaining = max(round(remaining, 3), 0.001)
    err = rate_limited("auth.lockout", remaining)
    err.headers["Retry-After"] = str(max(1, int(-(-remaining // 1))))
    return err


async def reserve(rt: Runtime, subjects: list[str], ip: str) -> Attempt:
    """Count this attempt against every subject (`account` / `unknown_login`; none for a passkey) and the
    address, or raise 429 when one is locked (then nothing stays counted)."""
    now = rt.now_ts()
    attempt = Attempt()
    keys = [(_subject_key(v), LOGIN_FAILURES) for v in dict.fromkeys(subjects)] + [(_ip_key(ip), ADDRESS_FAILURES)]
    for key, threshold in keys:
        allowed, doc = await rt.store.reserve(key, now, window=WINDOW, threshold=threshold, lock=LOCK)
        if not allowed:
            await release(rt, attempt)
            raise _refusal(float(doc["until"]) - now)
        attempt.held.append((key, threshold, float(doc["first"]), int(doc["n"])))
    return attempt


async def release(rt: Runtime, attempt: Attempt) -> None:
    """Give the reservations back: the attempt was not a failure."""
    now = rt.now_ts()
    for key, threshold, first, _ in attempt.held:
        await rt.store.release(key, now, first=first, threshold=threshold)
    attempt.held = []


async def succeeded(rt: Runtime, attempt: Attempt) -> None:
    """A success resets the account's counter; the address keeps its other failures."""
    for key in attempt.login_keys:
        await rt.store.delete(key)
    attempt.held = [h for h in attempt.held if h[1] != LOGIN_FAILURES]
    await release(rt, attempt)


def failed(attempt: Attempt) -> bool:
    """The attempt failed: its reservations stay counted. True when it locked a login value or address."""
    locked = attempt.locks_on_failure
    attempt.held = []
    return locked

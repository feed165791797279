"""Account calls over HTTP: logins, sessions and their carriers, two-factor authentication.

TOTP codes are computed here with pyotp from the secret the service hands out, at the service clock's
time, independently of the service's own TOTP code."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pyotp

from tests.support.personas import Account

ME = "/api/v1/users/@me"
SETUP = "/api/v1/auth/2fa/setup"
ENABLE = "/api/v1/auth/2fa/enable"
DISABLE = "/api/v1/auth/2fa/disable"
BACKUP_CODES = "/api/v1/auth/2fa/backup-codes"
LOGIN = "/api/v1/auth/login"
STEP_UP = "/api/v1/auth/step-up"
SESSIONS = "/api/v1/auth/sessions"
LOGOUT = "/api/v1/auth/logout"
LOGOUT_ALL = "/api/v1/auth/logout-all"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def cookie(token: str) -> dict[str, str]:
    return {"Cookie": f"__Host-session={token}"}


async def login(client: Any, login_value: str, password: str, **extra: Any) -> Any:
    """The response of a login (not asserted); the cookie it sets is dropped so requests stay Bearer."""
    r = await client.post(LOGIN, json={"login": login_value, "password": password, **extra})
    client.cookies.clear()
    return r


async def second_session(client: Any, account: Any) -> dict[str, Any]:
    """The login answer of another session of `account` (token, user, session)."""
    r = await login(client, account["user"]["username"], account["password"])
    assert r.status_code == 200, r.text
    return r.json()


async def another_device(client: Any, account: Any) -> Account:
    """Another signed-in device of the account (a session of its own)."""
    other = await second_session(client, account)
    return Account(token=other["token"], user=other["user"], password=account["password"], session=other["session"])


def totp_code(secret: str, clock: Any, steps: int = 0) -> str:
    """The RFC 6238 code at the service clock's time (+ `steps` periods of 30 s)."""
    return pyotp.TOTP(secret).at(clock.now() + timedelta(seconds=30 * steps))


def next_code(secret: str, clock: Any) -> str:
    """Move to the next 30 s step (each step's code is accepted once) and return its code."""
    clock.advance(30)
    return totp_code(secret, clock)


async def enable_2fa(client: Any, account: Any, clock: Any) -> tuple[str, list[str]]:
    """Set up and enable TOTP for `account`; returns (secret, backup codes). The current step's code is
    consumed by the enabling, so callers use `next_code` for the next one."""
    r = await client.post(SETUP, headers=account.headers)
    assert r.status_code == 200, r.text
    secret = r.json()["secret"]
    r = await client.post(ENABLE, json={"totp_code": totp_code(secret, clock)}, headers=account.headers)
    assert r.status_code == 200, r.text
    return secret, r.json()["backup_codes"]

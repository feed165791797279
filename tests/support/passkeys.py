"""Passkey calls over HTTP with the software authenticator of tests/support/webauthn.py."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from meadhall.db.schema import security_events
from tests.support.webauthn import Authenticator

PASSKEYS = "/api/v1/auth/passkeys"
REGISTER_OPTIONS = f"{PASSKEYS}/register/options"
REGISTER_VERIFY = f"{PASSKEYS}/register/verify"
LOGIN_OPTIONS = f"{PASSKEYS}/login/options"
LOGIN_VERIFY = f"{PASSKEYS}/login/verify"
STEP_UP = "/api/v1/auth/step-up"


async def register_options(client: Any, account: Any) -> dict[str, Any]:
    r = await client.post(REGISTER_OPTIONS, headers=account.headers)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def add_passkey(client: Any, account: Any, authenticator: Authenticator, name: str | None = None
                      ) -> dict[str, Any]:
    """Register a new passkey of `authenticator` for `account` (stepped up); returns the Passkey."""
    ceremony = await register_options(client, account)
    body: dict[str, Any] = {"ceremony_id": ceremony["ceremony_id"],
                            "credential": authenticator.create(ceremony["options"])}
    if name is not None:
        body["name"] = name
    r = await client.post(REGISTER_VERIFY, json=body, headers=account.headers)
    assert r.status_code == 201, r.text
    return dict(r.json()["passkey"])


async def login_options(client: Any, email: str | None = None, **kw: Any) -> dict[str, Any]:
    r = await client.post(LOGIN_OPTIONS, json={} if email is None else {"email": email}, **kw)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def login_verify(client: Any, ceremony_id: str, credential: dict[str, Any], **kw: Any) -> Any:
    """The response of a passkey sign-in (not asserted); the cookie it sets is dropped."""
    r = await client.post(LOGIN_VERIFY, json={"ceremony_id": ceremony_id, "credential": credential}, **kw)
    client.cookies.clear()
    return r


async def passkey_login(client: Any, authenticator: Authenticator, email: str | None = None, **get: Any) -> Any:
    """A whole passkey sign-in: options, the authenticator's answer, verify."""
    ceremony = await login_options(client, email)
    return await login_verify(client, ceremony["ceremony_id"], authenticator.get(ceremony["options"], **get))


async def security_events_of(rt: Any, type_: str) -> list[tuple[Any, ...]]:
    """The security events of this type recorded so far, oldest first: (user_id, data)."""
    async with rt.read() as uow:
        rows = await uow.conn.execute(select(security_events.c.user_id, security_events.c.data)
                                      .where(security_events.c.type == type_).order_by(security_events.c.id))
    return [tuple(r) for r in rows]

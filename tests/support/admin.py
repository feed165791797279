"""Instance administrators for tests: an account granted administration the way the operator does it
(`meadhall make-admin`, which deletes the sessions it held), with TOTP enrolled first, then signed in
again with password + code as the sign-in rules for administrators demand. The new session is stepped up
for its first 10 minutes (`clock.advance(601)` lapses it)."""

from __future__ import annotations

from typing import Any

from meadhall.accounts import admin_ops
from tests.support.accounts import enable_2fa, login, next_code
from tests.support.messages import post
from tests.support.personas import Account

INSTANCE = "/instance"


async def sign_in_admin(client: Any, rt: Any, account: Account) -> Account:
    """A new session of an administrator with TOTP (`account["totp_secret"]`); the account is updated."""
    secret = account["totp_secret"]
    r = await login(client, account["user"]["username"], account["password"],
                    totp_code=next_code(secret, rt.clock))
    assert r.status_code == 200, r.text
    data = r.json()
    account.update(token=data["token"], user=data["user"], session=data["session"])
    return account


async def admin_account(client: Any, accounts: Any, rt: Any, username: str | None = None) -> Account:
    """A registered instance administrator with TOTP enrolled, signed in again after the grant.

    Extra keys: `totp_secret`, `backup_codes`."""
    account = await accounts.register(username)
    secret, codes = await enable_2fa(client, account, rt.clock)
    await admin_ops.make_admin(rt, account["user"]["email"])
    account.update(totp_secret=secret, backup_codes=codes)
    return await sign_in_admin(client, rt, account)


def user_url(user_id: Any, path: str = "") -> str:
    """`/instance/users/{id}{path}` (for the `Api` helper, which prefixes /api/v1)."""
    return f"{INSTANCE}/users/{user_id}{path}"


async def say(client: Any, clock: Any, account: Account, channel_id: str, count: int) -> list[str]:
    """Post `count` messages two seconds apart (under the sending rate limit); their ids, in order."""
    sent = []
    for i in range(count):
        sent.append((await post(client, account, channel_id, f"message {i}"))["id"])
        clock.advance(2)
    return sent

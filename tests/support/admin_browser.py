"""An instance administrator signed in in a browser: password and a TOTP code, as the sign-in rules for
administrators demand (tests/support/admin.py makes the account)."""

from __future__ import annotations

from typing import Any

from tests.support.accounts import next_code
from tests.support.browser import ORIGIN, PASSWORD


async def admin_context(browser: Any, rt: Any, admin: Any, **options: Any) -> Any:
    """A browser context signed in as `admin` (an `admin_account`, with its `totp_secret`) the way the client
    does it: a same-origin POST from a page of the service (/healthz, no scripts of its own)."""
    context = await browser.new_context(**options)
    page = await context.new_page()
    await page.goto(f"{ORIGIN}/healthz")
    status = await page.evaluate(
        """async ([login, password, totp_code]) => (await fetch('/api/v1/auth/login', {method: 'POST',
             headers: {'Content-Type': 'application/json'}, body: JSON.stringify({login, password, totp_code})})).status""",
        [admin["user"]["username"], PASSWORD, next_code(admin["totp_secret"], rt.clock)])
    assert status == 200, status
    await page.close()
    return context

"""`meadhall totp-setup` (an operator enrolling a person) names the instance by `DOMAIN` in the otpauth URI,
as the enrolment in the client does (tests/accounts/test_totp_issuer.py)."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlparse

import pytest

DOMAIN = "chat.example.org"


@pytest.mark.parametrize("settings_overrides", [{"DOMAIN": DOMAIN, "PUBLIC_URL": f"https://{DOMAIN}"}])
async def test_the_operators_enrolment_names_the_instance_by_its_domain(cli, accounts):
    await accounts.register("alice")
    r = await cli("totp-setup", "--email", "alice@example.com")
    assert r.exit_code == 0, r.stderr
    url = urlparse(r.json["otpauth_url"])
    assert parse_qs(url.query)["issuer"] == [DOMAIN]
    assert unquote(url.path) == f"/{DOMAIN}:alice"

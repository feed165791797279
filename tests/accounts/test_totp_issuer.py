"""The authenticator app names an enrolment after the instance: the otpauth URI's issuer and the label's
prefix are `DOMAIN` (docs/architecture.md, TOTP), for the enrolment a person starts in the client and for
the one an operator makes with `meadhall totp-setup`, and never the `localhost` of the default when a
domain is configured."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlparse

import pytest

from tests.support.accounts import ENABLE, SETUP, login, totp_code

DOMAIN = "chat.example.org"
pytestmark = pytest.mark.parametrize("settings_overrides", [{"DOMAIN": DOMAIN, "PUBLIC_URL": f"https://{DOMAIN}"}])


def issuer_and_label(url: str) -> tuple[list[str], str]:
    parts = urlparse(url)
    assert parts.scheme == "otpauth" and parts.netloc == "totp"
    return parse_qs(parts.query)["issuer"], unquote(parts.path)


async def test_the_enrolment_names_the_instance_by_its_domain(client, accounts, clock):
    alice = await accounts.register("alice")
    r = await client.post(SETUP, headers=alice.headers)
    assert r.status_code == 200, r.text
    issuer, label = issuer_and_label(r.json()["otpauth_url"])
    assert issuer == [DOMAIN]
    assert label == f"/{DOMAIN}:alice"
    # The secret of that URI is the one the service then accepts codes of.
    secret = parse_qs(urlparse(r.json()["otpauth_url"]).query)["secret"][0]
    r = await client.post(ENABLE, json={"totp_code": totp_code(secret, clock)}, headers=alice.headers)
    assert r.status_code == 200, r.text
    assert (await login(client, "alice", alice["password"])).json()["error"]["code"] == "auth.2fa_required"

"""Class `push`: when Web Push is configured, VAPID_PRIVATE_KEY parses as a P-256 key (its public key is
what browsers receive) and VAPID_SUBJECT is a contact push services accept (a mailto: or https: URL)."""

from __future__ import annotations

from meadhall.config import Settings
from meadhall.push.keys import load_private_key, public_key_b64
from meadhall.system.doctor.config import is_loopback_host
from meadhall.system.doctor.findings import Finding, describe, error, ok, warning

KLASS = "push"


def check_key(settings: Settings) -> Finding:
    if not settings.VAPID_PRIVATE_KEY:
        return ok(KLASS, "vapid_key", "Web Push is off (VAPID_PRIVATE_KEY unset)")
    try:
        public = public_key_b64(load_private_key(settings.VAPID_PRIVATE_KEY))
    except Exception as err:  # cryptography raises ValueError, TypeError or UnsupportedAlgorithm
        return error(KLASS, "vapid_key", f"VAPID_PRIVATE_KEY is not a P-256 private key (PKCS#8, PEM or base64url "
                     f"DER): {describe(err)}", "generate one with `meadhall vapid-keys` and set VAPID_PRIVATE_KEY to its "
                     "private_key (changing it makes browsers subscribe again)")
    return ok(KLASS, "vapid_key", f"VAPID_PRIVATE_KEY is a P-256 key; public key {public}")


def check_subject(settings: Settings) -> Finding:
    subject = settings.VAPID_SUBJECT or ""
    if not subject.startswith(("mailto:", "https://")):
        return error(KLASS, "vapid_subject", f"VAPID_SUBJECT {subject!r} is neither a mailto: nor an https: URL: "
                     "push services refuse the messages", "set VAPID_SUBJECT=mailto:admin@example.com (a "
                     "mailbox you read)")
    domain = subject.split("@", 1)[1] if subject.startswith("mailto:") and "@" in subject else ""
    if subject.startswith("mailto:") and (is_loopback_host(domain) or "." not in domain):
        return warning(KLASS, "vapid_subject", f"VAPID_SUBJECT {subject} is not a reachable address (some push "
                       "services, Apple's among them, refuse such a contact)",
                       "set VAPID_SUBJECT=mailto:admin@example.com (a mailbox you read)")
    return ok(KLASS, "vapid_subject", f"VAPID_SUBJECT is {subject}")


def check(settings: Settings) -> list[Finding]:
    if not settings.VAPID_PRIVATE_KEY:
        return [check_key(settings)]
    return [check_key(settings), check_subject(settings)]

"""Class `config`: the configuration loads, DOMAIN agrees with PUBLIC_URL (passkeys, cookies), the scheme
suits the `Secure` session cookie, TLS_ENABLED agrees with the scheme, and SECRET_KEY is strong.
Pure: no file, no network (the key file is storage's)."""

from __future__ import annotations

import ipaddress
import math
import re
from collections import Counter

from meadhall.config import SECRET_KEY_MIN_BYTES, ConfigError, Settings
from meadhall.system.doctor.findings import Finding, error, ok, warning

KLASS = "config"
NEW_KEY = "openssl rand -base64 48"
# Bits of the key's character distribution times its length; a random 32-byte base64 key has about 190.
MIN_KEY_BITS = 128
# Parts of keys copied from examples, tests or tutorials rather than generated.
_PLACEHOLDERS = ("changeme", "change-me", "change_me", "example", "not-for-production", "secret-key",
                 "secretkey", "password", "insecure", "default", "placeholder", "test-secret", "dev-secret")

# What to do when a variable stops the configuration from loading (the rule is in the message).
_LOAD_FIXES = {
    "SECRET_KEY": f"set SECRET_KEY to a random key of at least {SECRET_KEY_MIN_BYTES} bytes (`{NEW_KEY}`), "
                  "or unset it to have one generated into DATA_DIR/secret.key",
    "DOMAIN": "set DOMAIN to the bare host name users reach, e.g. DOMAIN=chat.example.com",
    "PUBLIC_URL": "set PUBLIC_URL to the external origin, e.g. PUBLIC_URL=https://chat.example.com",
    "OUTBOUND_ALLOWED_NETWORKS": "list CIDRs separated by commas, e.g. OUTBOUND_ALLOWED_NETWORKS=10.1.2.0/24, "
                                 "or leave it empty",
    "CORS_ALLOWED_ORIGINS": "list the allowed origins, e.g. CORS_ALLOWED_ORIGINS=https://app.example.com, "
                            "or leave it empty",
    "RATE_LIMITS": 'set RATE_LIMITS to a JSON object such as {"global": "5000/60"}, or unset it',
}


def load_failure(err: ConfigError) -> Finding:
    """A configuration that does not load: the variable its message names, and how to correct it."""
    message = str(err)
    found = re.match(r"invalid configuration: ([A-Z_]+)", message)
    variable = found.group(1) if found else None
    fix = _LOAD_FIXES.get(variable or "") or (
        f"correct {variable} (docs/reference/configuration.md lists every variable and its values)"
        if variable else "correct the configuration (docs/reference/configuration.md)")
    return error(KLASS, "load", message, fix)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def url_host(origin: str) -> str:
    """The host of `scheme://host[:port]`, without port or IPv6 brackets."""
    hostport = origin.split("://", 1)[1].split("/", 1)[0]
    if hostport.startswith("["):
        return hostport[1:hostport.index("]")].lower()
    return hostport.rsplit(":", 1)[0].lower() if ":" in hostport else hostport.lower()


def is_loopback_host(host: str) -> bool:
    """Where browsers treat plain http as a secure context and store a `Secure` cookie."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_domain(settings: Settings) -> list[Finding]:
    domain, host = settings.DOMAIN.strip("[]").lower(), url_host(settings.public_origin)
    found: list[Finding] = []
    if host != domain and not host.endswith("." + domain):
        found.append(error(KLASS, "domain", (
            f"DOMAIN {settings.DOMAIN} is not the host of PUBLIC_URL {settings.PUBLIC_URL} ({host}): passkeys "
            "are bound to DOMAIN and browsers refuse them on another host; links and the session cookie point "
            "at the wrong place"),
            f"set DOMAIN={host}, or PUBLIC_URL=https://{settings.DOMAIN} if that is the address users reach"))
    elif host != domain:
        found.append(warning(KLASS, "domain", (
            f"PUBLIC_URL's host {host} is below DOMAIN {settings.DOMAIN}: passkeys work (their RP ID may be a "
            "parent domain), but they are then valid on every host of that domain and invitation links name "
            "DOMAIN"), f"set DOMAIN={host} unless that is intended"))
    else:
        found.append(ok(KLASS, "domain", f"DOMAIN {settings.DOMAIN} is the host of PUBLIC_URL {settings.PUBLIC_URL}"))
    if _is_ip(settings.DOMAIN):
        found.append(warning(KLASS, "passkeys", (
            f"DOMAIN {settings.DOMAIN} is an IP address: passkeys are off (sign-in answers "
            "auth.passkey_unsupported); passwords and TOTP still work"),
            "give the service a host name with a TLS certificate: DOMAIN=chat.example.com and "
            "PUBLIC_URL=https://chat.example.com"))
    else:
        found.append(ok(KLASS, "passkeys", f"passkeys are on, for RP ID {settings.DOMAIN}"))
    return found


def check_scheme(settings: Settings) -> list[Finding]:
    """The session cookie is `__Host-session`, always `Secure`: browsers store it on https, and on http
    only for loopback hosts. The gateway URL follows TLS_ENABLED, and an https page may not open ws://."""
    origin, host = settings.public_origin, url_host(settings.public_origin)
    https = origin.startswith("https://")
    found: list[Finding] = []
    if https:
        found.append(ok(KLASS, "tls", f"PUBLIC_URL {origin} is https: browsers keep the Secure session cookie"))
    elif is_loopback_host(host):
        found.append(ok(KLASS, "tls", (
            f"PUBLIC_URL {origin} is plain http on a loopback host: browsers accept the Secure session cookie "
            "there (for this machine only)")))
    else:
        found.append(error(KLASS, "tls", (
            f"PUBLIC_URL {origin} is plain http on a host that is not loopback: browsers do not store the Secure "
            "session cookie there, so web sign-in does not last, and passkeys need https"),
            f"serve through a TLS reverse proxy (docs/operations.md, section 2) and set "
            f"PUBLIC_URL=https://{settings.public_host}"))
    if https and not settings.TLS_ENABLED:
        found.append(error(KLASS, "tls_enabled", (
            "TLS_ENABLED is false while PUBLIC_URL is https: the gateway URL is ws://, which a page loaded over "
            "https may not open"), "unset TLS_ENABLED (it follows PUBLIC_URL) or set TLS_ENABLED=true"))
    elif not https and settings.TLS_ENABLED:
        found.append(warning(KLASS, "tls_enabled", (
            "TLS_ENABLED is true while PUBLIC_URL is http: clients are sent to a wss:// gateway on an http "
            "origin"), f"set PUBLIC_URL=https://{settings.public_host}, or unset TLS_ENABLED"))
    else:
        found.append(ok(KLASS, "tls_enabled", f"the gateway URL is {settings.gateway_url}"))
    return found


def key_bits(key: str) -> float:
    """An estimate of the key's strength: the entropy of its character distribution times its length."""
    counts = Counter(key)
    per_char = -sum(n / len(key) * math.log2(n / len(key)) for n in counts.values())
    return max(0.0, per_char * len(key))  # max: a one-character key gives -0.0


def key_weakness(key: str) -> str | None:
    """Why `key` is weak, or None."""
    if len(key.encode()) < SECRET_KEY_MIN_BYTES:
        return f"it is shorter than {SECRET_KEY_MIN_BYTES} bytes"
    lowered = key.lower()
    placeholder = next((p for p in _PLACEHOLDERS if p in lowered), None)
    if placeholder:
        return f"it contains {placeholder!r}: a key from an example or a test, not a generated one"
    bits = key_bits(key)
    if bits < MIN_KEY_BITS:
        return f"it has about {bits:.0f} bits of entropy (a generated key has over {MIN_KEY_BITS})"
    return None


def check_secret_key(settings: Settings) -> list[Finding]:
    """SECRET_KEY when set (the generated key file is checked with DATA_DIR)."""
    if not settings.SECRET_KEY:
        return [ok(KLASS, "secret_key", "SECRET_KEY is unset: the key is DATA_DIR/secret.key (see storage)")]
    weakness = key_weakness(settings.SECRET_KEY)
    if weakness:
        return [error(KLASS, "secret_key", (
            f"SECRET_KEY is weak: {weakness}. E-mail addresses and TOTP secrets are only as safe as this key"),
            f"before any data exists: set SECRET_KEY to `{NEW_KEY}` and escrow it (docs/operations.md, "
            "\"Key escrow\"); a key already in use cannot be changed yet")]
    return [ok(KLASS, "secret_key", f"SECRET_KEY is set and strong (about {key_bits(settings.SECRET_KEY):.0f} bits)")]


def check(settings: Settings) -> list[Finding]:
    return [*check_domain(settings), *check_scheme(settings), *check_secret_key(settings)]

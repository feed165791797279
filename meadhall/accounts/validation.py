"""Field rules (the account fields of the OpenAPI document, docs/reference/limits.md) shared by the API
schemas and the CLI."""

from __future__ import annotations

import functools
import re
import zoneinfo

from meadhall.core.text import check_single_line

USERNAME = re.compile(r"^[A-Za-z0-9_.]{2,32}$")
LOCALE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
CUSTOM_EMOJI = re.compile(r"^<a?:[A-Za-z0-9_]{2,32}:\d{1,20}>$")


def check_username(value: str) -> str:
    value = value.strip()
    if not USERNAME.match(value):
        raise ValueError("must be 2-32 characters of letters, digits, '_' or '.'")
    return value


_LOCAL = re.compile(r"^[^\s@\\\"(),:;<>\[\]]{1,64}$")
_LABEL = re.compile(r"^(?!-)[^\s@.\\/:]{1,63}(?<!-)$")


def check_email(value: str) -> str:
    """RFC 5321 shape, syntax only: no DNS, and single-label or reserved domains are accepted because
    self-hosted instances use them (the CLI creates `@example.invalid` addresses)."""
    value = value.strip()
    if len(value) > 254:
        raise ValueError("must be at most 254 characters")
    check_single_line(value)
    local, at, domain = value.rpartition("@")
    if not at or not _LOCAL.match(local) or local.startswith(".") or local.endswith(".") or ".." in local:
        raise ValueError("must be an email address like name@example.com")
    if not domain or len(domain) > 253 or not all(_LABEL.match(label) for label in domain.split(".")):
        raise ValueError("must be an email address with a valid domain part")
    return f"{local}@{domain}"


@functools.lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def check_timezone(value: str) -> str:
    value = value.strip()
    if value not in _zones():
        raise ValueError("must be an IANA time zone name such as Europe/Moscow")
    return value


def check_locale(value: str) -> str:
    value = value.strip()
    if len(value) > 16 or not LOCALE.match(value):
        raise ValueError("must be a BCP 47 tag such as en or pt-BR")
    return value


def check_display_name(value: str) -> str:
    value = value.strip()
    if not 1 <= len(value) <= 32:
        raise ValueError("must be 1-32 characters")
    return check_single_line(value)


def check_custom_status_emoji(value: str) -> str:
    value = value.strip()
    if len(value) > 64:
        raise ValueError("must be at most 64 characters")
    check_single_line(value)
    if value.startswith("<"):
        if not CUSTOM_EMOJI.match(value):
            raise ValueError("must be a Unicode emoji or <:name:id>")
    elif any(ch.isascii() and (ch.isalnum() or ch.isspace()) for ch in value):
        raise ValueError("must be a Unicode emoji or <:name:id>")
    return value

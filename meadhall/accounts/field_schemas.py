"""The JSON Schema of the account field rules (accounts/validation.py, accounts/passwords.py), for the
OpenAPI document: each pattern accepts exactly what its check accepts, surrounding whitespace included
(the checks strip it, docs/reference/errors.md). tests/api/test_documented_patterns.py holds them to that; the
schemathesis run holds the document to the code."""

from __future__ import annotations

import zoneinfo
from typing import Any

from meadhall.accounts.validation import CUSTOM_EMOJI, LOCALE, USERNAME
from meadhall.core import limits

# Refused by core.text.check_single_line.
_CONTROL = "\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029"


def _core(regex: str) -> str:
    return regex.removeprefix("^").removesuffix("$")


USERNAME_SCHEMA: dict[str, Any] = {"pattern": f"^\\s*{_core(USERNAME.pattern)}\\s*$",
                                   "description": "2-32 letters, digits, `_` or `.`"}
# The documented form of a locale; the check also ignores surrounding whitespace, which the pattern leaves out: a length
# limit on the trimmed value needs a look-ahead, and generators cannot draw from patterns with one.
LOCALE_SCHEMA: dict[str, Any] = {"pattern": LOCALE.pattern, "maxLength": 16,
                                 "description": "A BCP 47 tag such as `en` or `pt-BR` (at most 16 characters)"}
# 1-32 characters after trimming, on one line.
DISPLAY_NAME_SCHEMA: dict[str, Any] = {
    "pattern": f"^\\s*[^\\s{_CONTROL}](?:[^{_CONTROL}]{{0,30}}[^\\s{_CONTROL}])?\\s*$",
    "description": "1-32 characters after trimming, on one line"}

_LOCAL_CHAR = f'[^\\s@\\\\"(),:;<>\\[\\].{_CONTROL}]'
_LABEL_END = f"[^-\\s@.\\\\/:{_CONTROL}]"
_LABEL = f"{_LABEL_END}(?:[^\\s@.\\\\/:{_CONTROL}]{{0,61}}{_LABEL_END})?"
# check_email's characters and shape: a local part without a leading, trailing or doubled dot, a domain
# of labels that neither start nor end with `-`. Its lengths (at most 254 characters, a local part of 64, a
# domain of 253, labels of 63) need look-aheads no generator can draw from: they are stated as a rule
# (EMAIL_LENGTHS) beside the pattern.
EMAIL_SCHEMA: dict[str, Any] = {
    "pattern": f"^\\s*{_LOCAL_CHAR}+(?:\\.{_LOCAL_CHAR}+)*@{_LABEL}(?:\\.{_LABEL})*\\s*$",
    "description": "An email address like name@example.com (syntax only: single-label domains are accepted)"}
EMAIL_LENGTHS = "at most 254 characters, the local part at most 64, the domain at most 253"

# check_custom_status_emoji: empty, `<:name:id>` (or `<a:name:id>`), or up to 64 characters without ASCII
# letters, digits or spaces; trimmed, on one line.
_NOT_TEXT = f"A-Za-z0-9 {_CONTROL}"
STATUS_EMOJI_SCHEMA: dict[str, Any] = {
    "pattern": f"^\\s*(?:{_core(CUSTOM_EMOJI.pattern)}|[^<\\s{_NOT_TEXT}][^{_NOT_TEXT}]{{0,63}})?\\s*$",
    "description": "A Unicode emoji, or a custom emoji as `<:name:id>`"}

NEW_PASSWORD_SCHEMA: dict[str, Any] = {
    "minLength": limits.PASSWORD_MIN_LENGTH, "maxLength": limits.PASSWORD_MAX_LENGTH,
    "description": f"{limits.PASSWORD_MIN_LENGTH}-{limits.PASSWORD_MAX_LENGTH} characters, not a commonly "
                   "leaked password"}
TOO_COMMON = "not one of the commonly leaked passwords of the server's list (`too common`)"


def timezone_schema() -> dict[str, Any]:
    """The IANA names this host knows (zoneinfo), as check_timezone reads them."""
    return {"enum": sorted(zoneinfo.available_timezones()),
            "description": "An IANA time zone name such as Europe/Moscow (surrounding whitespace is ignored)"}
